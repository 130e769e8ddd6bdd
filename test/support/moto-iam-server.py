"""moto_server with IAM enforced on resources too, for the deployed twin (test/infra/iam-twin.test.ts).

moto checks a signed request's action against the caller's policies, but for DynamoDB, SSM and CloudFront it checks
every action against the resource "*", which a least-privilege statement (a table's ARN) never matches, and it fails on
presigned S3 URLs once IAM is on. This runs moto's own server with three changes, so that a request is allowed exactly
when AWS would allow it under the same identity policies:
- DynamoDB, SSM and CloudFront actions are checked against the ARNs they act on (a table or its index, each parameter
  named, a distribution), as IAM's service authorization reference lists them;
- a presigned S3 URL is checked as its signer's request: the signature over the query, then the signer's policies;
- a read of a missing S3 object also needs `s3:ListBucket` on the bucket (without it, S3 answers 403, not 404);
- a CORS preflight (`OPTIONS`) is answered from the bucket's CORS rules alone, as S3 answers it: browsers send it
  without credentials (moto would refuse it once IAM is on);
- a signature is checked over the query as the client sent it (werkzeug's URL has `%2F` decoded, which moto then
  signs differently, refusing a listing with `prefix=staging/`);
- nothing else changes: until `POST /moto-api/reset-auth` with body `0`, nothing is checked (the twin's set-up).

Usage: python3 moto-iam-server.py -H 127.0.0.1 -p PORT
"""

import hashlib
import hmac
import sys
from urllib.parse import parse_qsl, quote, urlparse

from moto import settings
from moto.cloudfront.responses import CloudFrontResponse
from moto.core.authorization import ActionAuthenticatorMixin
from moto.core.responses import BaseResponse
from moto.core.exceptions import AccessDeniedError, JsonRESTError
from moto.dynamodb.responses import DynamoHandler
from moto.iam.access_control import CreateAccessKeyFailure, S3IAMRequest, create_access_key
from moto.s3.exceptions import S3ClientError
from moto.s3.models import s3_backends
from moto.server import main
from moto.ssm.responses import SimpleSystemManagerResponse
from moto.utilities.utils import get_partition


def _enforced() -> bool:
    return ActionAuthenticatorMixin.request_count >= settings.INITIAL_NO_AUTH_ACTION_COUNT


def _dynamodb_resources(self) -> list[str]:
    body = self.body if isinstance(self.body, dict) else {}
    tables = [body["TableName"]] if "TableName" in body else list(body.get("RequestItems", {}))
    if not tables:
        return ["*"]
    base = f"arn:{get_partition(self.region)}:dynamodb:{self.region}:{self.current_account}:table/"
    index = f"/index/{body['IndexName']}" if "IndexName" in body else ""
    return [f"{base}{table}{index}" for table in tables]


def _ssm_resources(self) -> list[str]:
    names = self._get_param("Names") or [self._get_param("Name") or self._get_param("Path")]
    names = [name for name in names if name]
    if not names:
        return ["*"]
    base = f"arn:{get_partition(self.region)}:ssm:{self.region}:{self.current_account}:parameter/"
    # a selector (`name:3`) names the same parameter
    return [base + name.split(":")[0].lstrip("/") for name in names]


def _cloudfront_resources(self) -> list[str]:
    parts = urlparse(self.uri).path.strip("/").split("/")
    if len(parts) >= 3 and parts[1] == "distribution":
        return [f"arn:{get_partition(self.region)}:cloudfront::{self.current_account}:distribution/{parts[2]}"]
    return ["*"]


DynamoHandler._determine_resource = _dynamodb_resources
SimpleSystemManagerResponse._determine_resource = _ssm_resources
CloudFrontResponse._determine_resource = _cloudfront_resources

_authorize_normal = ActionAuthenticatorMixin._authenticate_and_authorize_normal_action


def _authorize_each(self, resource="*"):
    """An action on several resources (GetParameters of several names) needs each of them allowed. A JSON service
    (DynamoDB, SSM) answers a refusal as AWS does, `AccessDeniedException` in JSON, naming the resource."""
    for one in resource if isinstance(resource, list) else [resource]:
        try:
            _authorize_normal(self, one)
        except AccessDeniedError as denied:
            if not self.headers.get("X-Amz-Target"):
                raise
            raise JsonRESTError("AccessDeniedException", f"{denied.message} on resource: {one}") from denied


ActionAuthenticatorMixin._authenticate_and_authorize_normal_action = _authorize_each


def _sign(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


class PresignedS3Request(S3IAMRequest):
    """A request authorized by its query string (X-Amz-Credential, ..., X-Amz-Signature) instead of a header."""

    def __init__(self, account_id, method, path, query, headers, action):
        self.account_id = account_id
        self._method = method
        self._path = path
        self._query = query
        self._headers = headers
        self._data = {}
        access_key_id, self._date, self._region, self._service, _ = query["X-Amz-Credential"].split("/")
        self._action = f"{self._service}:{action}"
        try:
            self._access_key = create_access_key(
                account_id=account_id,
                partition=get_partition(self._region),
                access_key_id=access_key_id,
                # a session token makes it a role's session, as in a header
                headers={k: v for k, v in query.items() if k == "X-Amz-Security-Token"},
            )
        except CreateAccessKeyFailure as failure:
            self._raise_invalid_access_key(failure.reason)

    def check_signature(self) -> None:
        """SigV4 in the query string, recomputed with the signer's secret (the payload is UNSIGNED-PAYLOAD)."""
        signed = self._query["X-Amz-SignedHeaders"].split(";")
        lower = {name.lower(): value for name, value in self._headers.items()}
        canonical_query = "&".join(
            f"{quote(name, safe='-_.~')}={quote(value, safe='-_.~')}"
            for name, value in sorted((n, v) for n, v in self._query.items() if n != "X-Amz-Signature")
        )
        canonical = "\n".join(
            [
                self._method,
                self._path,
                canonical_query,
                "".join(f"{name}:{lower.get(name, '').strip()}\n" for name in signed),
                ";".join(signed),
                "UNSIGNED-PAYLOAD",
            ]
        )
        scope = f"{self._date}/{self._region}/{self._service}/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", self._query["X-Amz-Date"], scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        key = ("AWS4" + self._access_key.create_credentials().secret_key).encode()
        for part in (self._date, self._region, self._service, "aws4_request"):
            key = _sign(key, part)
        if not hmac.compare_digest(hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest(), self._query["X-Amz-Signature"]):
            self._raise_signature_does_not_match()


_setup_class = BaseResponse.setup_class


def _setup_keeping_raw_query(self, request, full_url, headers, *args, **kwargs):
    result = _setup_class(self, request, full_url, headers, *args, **kwargs)
    raw = getattr(request, "environ", {}).get("RAW_URI")
    self.raw_query = urlparse(raw).query if raw else None
    return result


BaseResponse.setup_class = _setup_keeping_raw_query


def _as_sent(self, authorize):
    """Runs moto's own check with the request's URL as the client sent it (its query still percent-encoded)."""
    raw = getattr(self, "raw_query", None)
    if raw is None:
        return authorize()
    uri = self.uri
    self.uri = urlparse(uri)._replace(query=raw).geturl()
    try:
        return authorize()
    finally:
        self.uri = uri


_authorize_s3_original = ActionAuthenticatorMixin._authenticate_and_authorize_s3_action


def _authorize_s3(self, bucket_name=None, key_name=None):
    return _as_sent(self, lambda: _authorize_s3_original(self, bucket_name=bucket_name, key_name=key_name))


def _authorize_s3_request(self, bucket_name=None, key_name=None):
    query = dict(parse_qsl(urlparse(self.uri).query, keep_blank_values=True))
    if "Authorization" in self.headers or "X-Amz-Credential" not in query:
        return _authorize_s3(self, bucket_name=bucket_name, key_name=key_name)
    arn = f"{bucket_name or '*'}/{key_name}" if key_name else (bucket_name or "*")
    request = PresignedS3Request(
        self.current_account, self.method, self.raw_path, query, dict(self.headers), self._get_action()
    )
    request.check_signature()
    request.check_action_permitted(f"arn:{get_partition(self.region)}:s3:::{arn}")


def _object_exists(self, bucket_name, key_name) -> bool:
    try:
        return s3_backends[self.current_account][get_partition(self.region)].get_object(bucket_name, key_name) is not None
    except S3ClientError:
        return False


def _authorize_s3_or_presigned(self, bucket_name=None, key_name=None):
    if self.method == "OPTIONS":
        return
    if not _enforced():
        return _authorize_s3(self, bucket_name=bucket_name, key_name=key_name)
    _authorize_s3_request(self, bucket_name, key_name)
    if key_name and self._get_action() == "GetObject" and not _object_exists(self, bucket_name, key_name):
        # S3 answers a missing object with 404 only to a caller that may list the bucket; to others, 403
        action = self.data["Action"]
        self.data["Action"] = "ListBucket"
        try:
            _authorize_s3_request(self, bucket_name)
        finally:
            self.data["Action"] = action


ActionAuthenticatorMixin._authenticate_and_authorize_s3_action = _authorize_s3_or_presigned

if __name__ == "__main__":
    main(sys.argv[1:])
