import tseslint from 'typescript-eslint';

/** Folders that must not reach into others (see docs/architecture.md). */
const boundaries = [
  {
    files: ['functions/core/**/*.ts'],
    patterns: [
      '**/adapters/**',
      '**/http/**',
      '**/imaging/**',
      '**/api/**',
      '**/config',
      '@aws-sdk/*',
      'sharp',
      'busboy',
      'aws-lambda',
    ],
  },
  { files: ['functions/imaging/**/*.ts'], patterns: ['**/adapters/**', '**/http/**', '**/api/**', '@aws-sdk/*'] },
  { files: ['functions/adapters/**/*.ts'], patterns: ['**/http/**', '**/imaging/**', '**/api/**', 'sharp'] },
  { files: ['functions/http/**/*.ts'], patterns: ['**/adapters/**', '**/imaging/**', '**/api/**', '@aws-sdk/*', 'sharp'] },
  { files: ['functions/**/*.ts'], patterns: ['**/local/**', '**/lib/**', '**/test/**', 'aws-cdk-lib', 'aws-cdk-lib/*'] },
  // the upload page's script runs in the browser: the links and the embed codes, and nothing of Node's
  {
    files: ['functions/browser/**/*.ts'],
    patterns: ['**/adapters/**', '**/imaging/**', '**/api/**', '**/config', '@aws-sdk/*', 'sharp', 'busboy', 'node:*'],
  },
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
      '**/api/**',
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
