import { uploadUrl } from '../core/image/links';

/**
 * Ready configurations of the clients people upload with, for one host: the API and apps page (`apps-page.ts`) offers
 * each as a file, and `npm run client-config` prints each. The key goes in the `X-API-Key` header (never in a URL,
 * where logs and histories keep it).
 */

export const KEY_PLACEHOLDER = 'YOUR_KEY';

export type ClientName = 'sharex' | 'picgo' | 'flameshot';
export const CLIENTS: readonly ClientName[] = ['sharex', 'picgo', 'flameshot'];

/** A ShareX custom uploader (`.sxcu`): multipart, file field `source`, links and errors read from the JSON answer. */
export function sharexConfig(baseUrl: string, key: string): string {
  const config = {
    Version: '15.0.0',
    Name: new URL(baseUrl).host,
    DestinationType: 'ImageUploader',
    RequestMethod: 'POST',
    RequestURL: uploadUrl(baseUrl),
    Headers: { 'X-API-Key': key },
    Body: 'MultipartFormData',
    Arguments: { format: 'json' },
    FileFormName: 'source',
    URL: '{json:image.url}',
    ThumbnailURL: '{json:image.thumb.url}',
    DeletionURL: '{json:image.delete_url}',
    ErrorMessage: '{json:error.message}',
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * PicGo with its `web-uploader` plugin ("custom web uploader", `picgo install web-uploader`), the way PicGo talks to
 * any Chevereto-compatible host: the part of PicGo's `data.json` (or `config.json` for PicGo-Core) to merge in.
 */
export function picgoConfig(baseUrl: string, key: string): string {
  const config = {
    picBed: {
      uploader: 'web-uploader',
      current: 'web-uploader',
      'web-uploader': {
        url: uploadUrl(baseUrl),
        paramName: 'source',
        jsonPath: 'image.url',
        customHeader: JSON.stringify({ 'X-API-Key': key }),
        customBody: JSON.stringify({ format: 'json' }),
      },
    },
    picgoPlugins: { 'picgo-plugin-web-uploader': true },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** A shell single-quoted word: safe whatever the text holds. */
function shellQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A script for Flameshot: capture a region, upload it, copy the link to the clipboard (Wayland's wl-copy, or xclip,
 * or xsel) and print it; the service's message and a non-zero exit on failure.
 */
export function flameshotScript(baseUrl: string, key: string): string {
  return `#!/bin/sh
# Flameshot -> ${new URL(baseUrl).host}: select a region, upload it, copy its link.
# Bind it to a key of your desktop. Needs flameshot, curl 7.76 or later, and wl-copy, xclip or xsel.
set -eu
UPLOAD_URL=${shellQuoted(uploadUrl(baseUrl))}
API_KEY=\${IMAGE_UPLOAD_KEY:-${shellQuoted(key)}}
shot=$(mktemp)
errors=$(mktemp)
trap 'rm -f "$shot" "$errors"' EXIT
flameshot gui --raw > "$shot"
[ -s "$shot" ] || exit 0 # the capture was cancelled
if ! link=$(curl -sS --fail-with-body -H "X-API-Key: $API_KEY" -F "source=@$shot;filename=screenshot.png" -F format=txt "$UPLOAD_URL" 2>"$errors"); then
  # the service's message when it answered, curl's when it could not reach it
  echo "upload failed: \${link:-$(cat "$errors")}" >&2
  exit 1
fi
printf '%s' "$link" | { wl-copy 2>/dev/null || xclip -selection clipboard 2>/dev/null || xsel --clipboard --input; }
echo "$link"
`;
}

export function clientConfig(client: ClientName, baseUrl: string, key: string): string {
  switch (client) {
    case 'sharex':
      return sharexConfig(baseUrl, key);
    case 'picgo':
      return picgoConfig(baseUrl, key);
    case 'flameshot':
      return flameshotScript(baseUrl, key);
  }
}
