import tseslint from 'typescript-eslint';

/** What no code of the functions imports: the local server, the stack, the tests, CDK. */
const FUNCTIONS = ['**/local/**', '**/lib/**', '**/test/**', 'aws-cdk-lib', 'aws-cdk-lib/*'];
/** What neither the core nor the upload page's script imports: the adapters, the pictures, the AWS SDK, the roots. */
const OUTSIDE = ['**/adapters/**', '**/imaging/**', '**/roots/**', '**/config', '@aws-sdk/*', 'sharp', 'busboy'];
/** What the core never imports: the outside world. */
const CORE = [...FUNCTIONS, ...OUTSIDE, '**/http/**', 'aws-lambda'];

/** The core's capabilities, each in a sub-folder of its own, which the core's shared parts never import. */
const CAPABILITIES = ['upload', 'moderation', 'lifecycle', 'admin'];
const capabilitiesFrom = (folder) => CAPABILITIES.map((capability) => `${folder}/${capability}/*`);

/**
 * Folders that must not reach into others (see docs/architecture.md). A file takes the patterns of the last entry
 * that matches it (ESLint's flat config replaces a rule's options, it does not merge them): each entry lists all of
 * its own, and the general ones come first.
 */
const boundaries = [
  { files: ['functions/**/*.ts'], patterns: FUNCTIONS },
  { files: ['functions/core/**/*.ts'], patterns: CORE },
  // the shared kernel (the core's root) serves the capabilities in its sub-folders, and reads none of them
  { files: ['functions/core/*.ts'], patterns: [...CORE, ...capabilitiesFrom('.')] },
  // and so does its part on the image as clients see it (its links, ids, Image object)
  { files: ['functions/core/image/*.ts'], patterns: [...CORE, ...capabilitiesFrom('..')] },
  // imaging makes pixels: it hands them to the fingerprint, and knows nothing of moderation's policy
  {
    files: ['functions/imaging/**/*.ts'],
    patterns: [...FUNCTIONS, '**/adapters/**', '**/http/**', '**/roots/**', '**/moderation/**', '@aws-sdk/*'],
  },
  // the fingerprint is arithmetic on pixels: it loads no image library, and reads only the core's hash values
  {
    files: ['functions/fingerprint/**/*.ts'],
    patterns: [...CORE, '**/browser/**', '**/upload/**', '**/lifecycle/**', '**/admin/**'],
  },
  { files: ['functions/adapters/**/*.ts'], patterns: [...FUNCTIONS, '**/http/**', '**/imaging/**', '**/roots/**', 'sharp'] },
  {
    files: ['functions/http/**/*.ts'],
    patterns: [...FUNCTIONS, '**/adapters/**', '**/imaging/**', '**/roots/**', '@aws-sdk/*', 'sharp'],
  },
  // the upload page's script runs in the browser: the links and the embed codes, and nothing of Node's
  { files: ['functions/browser/**/*.ts'], patterns: [...FUNCTIONS, ...OUTSIDE, 'node:*'] },
  // the stack reads the contract's constants, never the code that answers requests (its pages, the OpenAPI document)
  {
    files: ['lib/**/*.ts', 'bin/**/*.ts'],
    patterns: [
      '**/local/**',
      'sharp',
      '**/http/responses',
      '**/http/pages',
      '**/http/router',
      '**/http/upload-page',
      '**/roots/**',
    ],
  },
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', 'coverage/**', '.data/**', '*.js', '*.mjs', 'scripts/**/*.cjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  ...boundaries.map(({ files, patterns }) => ({
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: patterns.map((group) => ({ group: [group], message: 'crosses a layer boundary' })) },
      ],
    },
  })),
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // fakes implement async ports without awaiting anything
      '@typescript-eslint/require-await': 'off',
    },
  },
);
