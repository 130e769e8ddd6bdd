/** s3rver's registry of access keys (it checks a request's key name against it; V4 signatures it does not check). */
declare module 's3rver/lib/models/account' {
  interface AWSAccount {
    createKeyPair(accessKeyId: string, secretAccessKey: string): void;
  }
  const account: { DUMMY_ACCOUNT: AWSAccount };
  export = account;
}
