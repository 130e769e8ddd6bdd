import { App, Validations, type AppProps, type Environment } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { CLOUDFRONT_REGION, EdgeGuardStack } from './edge-guard-stack';
import { ImageUploadStack } from './image-upload-stack';
import { needsUsEast1 } from './settings';
import { readDeploymentSettings } from './settings-reader';

/**
 * The CDK app: the stack, named by `-c stackName=NAME` (default `ImageUpload`), and, when a custom domain's certificate
 * or the edge firewall is asked for, `NAME-REGION-EdgeGuard` in us-east-1 beside it; all checked by cdk-nag's AwsSolutions and
 * Serverless rules on every synth. `environment` is where the stack goes (default: the CLI's account and region);
 * only the two-stack case needs it, as cross-region references need a region known at synth.
 */
export function buildApp(
  props: AppProps = {},
  environment: Environment = cliEnvironment(),
): { app: App; stack: ImageUploadStack; edgeGuard: EdgeGuardStack | undefined } {
  const app = new App(props);
  const settings = readDeploymentSettings(app.node);
  let edgeGuard: EdgeGuardStack | undefined;
  if (needsUsEast1(settings)) {
    if (environment.region === undefined)
      throw new Error(
        'a custom domain with hostedZoneId, or edgeFirewall, makes a stack in us-east-1 beside the service: give the service its region (AWS_REGION, or a profile that has one)',
      );
    const { domain } = settings;
    // one per copy: the same stack name in two regions makes two copies (docs/deployment.md, "More than one copy")
    const copy = `${settings.stackName}-${environment.region}`;
    edgeGuard = new EdgeGuardStack(app, `${copy}-EdgeGuard`, {
      env: { ...environment, region: CLOUDFRONT_REGION },
      description: "Image upload service: the distribution's certificate and firewall, in CloudFront's region",
      metricPrefix: copy,
      ...(domain?.hostedZoneId !== undefined && domain.certificateArn === undefined
        ? { certificateFor: { domainName: domain.name, hostedZoneId: domain.hostedZoneId } }
        : {}),
      ...(settings.edgeFirewallRateLimit === undefined ? {} : { firewallRateLimit: settings.edgeFirewallRateLimit }),
    });
  }
  const stack = new ImageUploadStack(app, settings.stackName, {
    description: 'Chevereto-compatible API v1 guest image upload service',
    ...(edgeGuard ? { env: environment, crossRegionReferences: true, edgeGuard } : {}),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true }));
  return { app, stack, edgeGuard };
}

/** The account and region the CDK CLI found (its profile or environment), as far as it found them. */
function cliEnvironment(): Environment {
  const account = process.env['CDK_DEFAULT_ACCOUNT'];
  const region = process.env['CDK_DEFAULT_REGION'];
  return { ...(account ? { account } : {}), ...(region ? { region } : {}) };
}
