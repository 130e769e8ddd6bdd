#!/usr/bin/env bash
# Makes the HEIC test fixtures from code. sharp's prebuilt libvips cannot encode HEVC, so the pixels are made with
# sharp and encoded with libheif's heif-enc (Debian package libheif-examples, with its x265 plugin). The outputs are
# committed so that tests need neither; run this again only to change them.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v heif-enc >/dev/null || { echo "heif-enc is missing: apt-get install libheif-examples" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
node -e "
const sharp = require('sharp');
const width = 96, height = 64;
const pixels = Buffer.alloc(width * height * 3);
for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) {
  const o = (y * width + x) * 3, marker = x < width / 4 && y < height / 4;
  pixels[o] = marker ? 255 : Math.round(x / width * 200); pixels[o + 1] = marker ? 0 : Math.round(y / height * 200); pixels[o + 2] = marker ? 0 : 128;
}
sharp(pixels, { raw: { width, height, channels: 3 } }).withExif({ IFD0: { Make: 'HeicCam', Model: 'H-1' } }).jpeg({ quality: 95 }).toFile('$tmp/gradient.jpg');
"
heif-enc --quality 70 --output test/fixtures/gradient.heic "$tmp/gradient.jpg"
ls -l test/fixtures/gradient.heic
