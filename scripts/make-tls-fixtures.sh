#!/usr/bin/env bash
# Makes the TLS test fixtures: a test CA and a certificate for fixture.test signed by it (valid 100 years). The
# URL-source tests serve HTTPS on 127.0.0.1 with them, to prove certificates are verified against the host name.
set -euo pipefail
cd "$(dirname "$0")/../test/fixtures/tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj "/CN=Image Upload Test CA" -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=fixture.test" -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:fixture.test\n' > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 36500 -extfile server.ext -out server.crt 2>/dev/null
rm -f server.csr server.ext ca.srl ca.key
ls -l
