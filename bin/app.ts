import { App } from 'aws-cdk-lib';
import { ImageUploadStack } from '../lib/image-upload-stack';

const app = new App();
new ImageUploadStack(app, 'ImageUpload');
