// The package's "types" field points at a file it does not ship; its declarations are in lib/cjs.
declare module 'imgbb-uploader' {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  import imgbbUploader = require('imgbb-uploader/lib/cjs/index');
  export = imgbbUploader;
}
