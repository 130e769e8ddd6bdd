import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { commandLine } from './command-line';

/**
 * `npm run openapi`: writes `docs/openapi.yaml` (the document people read and edit) as the JSON the service serves at
 * `/api/1/openapi.json` (`functions/http/openapi.json`, bundled with the function). A unit test fails when the two
 * differ, so run this after editing the YAML.
 */
const ROOT = join(__dirname, '..');
export const OPENAPI_YAML = join(ROOT, 'docs', 'openapi.yaml');
export const OPENAPI_JSON = join(ROOT, 'functions', 'http', 'openapi.json');

export function openapiFromYaml(): unknown {
  return parse(readFileSync(OPENAPI_YAML, 'utf8'));
}

if (require.main === module) {
  commandLine(
    'usage: npm run openapi   (writes functions/http/openapi.json from docs/openapi.yaml) (exit codes: 0 done, 1 failed, 2 usage)',
  );
  writeFileSync(OPENAPI_JSON, `${JSON.stringify(openapiFromYaml(), null, 2)}\n`);
  process.stdout.write(`wrote ${OPENAPI_JSON}\n`);
}
