import { externalEndpoints } from '../../../local/local-service';

describe("externalEndpoints (npm start on stores of one's own)", () => {
  it('uses the stand-ins when no endpoint variable is set', () => {
    expect(externalEndpoints({ AWS_REGION: 'eu-west-1' })).toBeUndefined();
  });

  it('takes AWS_ENDPOINT_URL for every store, and a service variable over it', () => {
    expect(
      externalEndpoints({ AWS_ENDPOINT_URL: 'http://127.0.0.1:5000', AWS_ENDPOINT_URL_S3: 'https://s3.example.test' }),
    ).toEqual({ s3: 'https://s3.example.test', dynamodb: 'http://127.0.0.1:5000', ssm: 'http://127.0.0.1:5000' });
  });

  it('refuses a mix of external and stand-in stores, naming the variables missing', () => {
    expect(() => externalEndpoints({ AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:5000' })).toThrow(
      'set AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SSM',
    );
  });

  it('refuses an endpoint that is no http(s) URL', () => {
    expect(() => externalEndpoints({ AWS_ENDPOINT_URL: '127.0.0.1:5000' })).toThrow('must be an http(s) URL');
  });
});
