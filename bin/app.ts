import { buildApp } from '../lib/app';

buildApp();
