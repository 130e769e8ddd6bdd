import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { ImageUploadStack } from './image-upload-stack';
import { readStackName } from './settings';

/**
 * The CDK app: the stack, named by `-c stackName=NAME` (default `ImageUpload`), checked by cdk-nag's AwsSolutions and
 * Serverless rules on every synth.
 */
export function buildApp(props: AppProps = {}): { app: App; stack: ImageUploadStack } {
  const app = new App(props);
  const stack = new ImageUploadStack(app, readStackName(app.node), {
    description: 'Chevereto-compatible API v1 guest image upload service',
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true }));
  return { app, stack };
}
