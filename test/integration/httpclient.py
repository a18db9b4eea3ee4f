"""HTTP helpers for the tests of the broker's HTTP API: requests with JSON bodies, answers
checked for their status and for the JSON error format. Set BASE (or pass at=) first."""
import json
import sys
import urllib.error
import urllib.request

BASE = None


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def call(method, path, body=None, raw=None, at=None):
    """(status, parsed body or text or None) of a request."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request((at or BASE) + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            code, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        code, text = e.code, e.read().decode()
    try:
        return code, json.loads(text) if text.strip() else None
    except ValueError:
        return code, text


def expect(method, path, status, body=None, raw=None, at=None):
    code, out = call(method, path, body, raw, at)
    if code != status:
        fail(f"{method} {path}: HTTP {code} (expected {status}): {out}")
    return out


def expect_error(method, path, status, kafka_error=None, body=None, raw=None):
    """The JSON error answer: error_code is the status, a message, the Kafka error name."""
    out = expect(method, path, status, body, raw)
    if not isinstance(out, dict) or out.get("error_code") != status or not out.get("message"):
        fail(f"{method} {path}: not a JSON error: {out}")
    if kafka_error and out.get("kafka_error") != kafka_error:
        fail(f"{method} {path}: kafka_error {out.get('kafka_error')}, expected {kafka_error}")
    return out
