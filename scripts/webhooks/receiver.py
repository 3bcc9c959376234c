#!/usr/bin/env python3
"""A webhook receiver as a team writes one: every delivery verified by the official
Standard Webhooks library (PyPI `standardwebhooks`), a delivery id kept once.

    python3 scripts/webhooks/receiver.py whsec_... [whsec_...]

Listens on 127.0.0.1 (a free port) and prints `listening on http://127.0.0.1:PORT/hook`.
POST /hook: verifies the body against the `webhook-*` headers with each secret given (a
receiver holding two during its own key rotation); answers 401 with the library's reason
when none verifies (a tampered body, a replay older than five minutes, a wrong key), 200
for a delivery id it already kept (a repeat: nothing done twice), 204 when it keeps a new
one. GET /received: every request so far as JSON, for the test that drives it.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Lock

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

VERIFIERS = [Webhook(secret) for secret in sys.argv[1:]]
RECEIVED = []
KEPT = set()
LOCK = Lock()


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
        headers = {k.lower(): v for k, v in self.headers.items()}
        verified_by, errors = [], []
        for i, verifier in enumerate(VERIFIERS):
            try:
                verifier.verify(body, headers)
                verified_by.append(i)
            except WebhookVerificationError as e:
                errors.append(str(e))
        delivery = headers.get("webhook-id", "")
        with LOCK:
            if not verified_by:
                status = 401
            elif delivery in KEPT:
                status = 200
            else:
                KEPT.add(delivery)
                status = 204
            RECEIVED.append(
                {
                    "id": delivery,
                    "headers": {k: v for k, v in headers.items() if k.startswith("webhook-")},
                    "body": body,
                    "verified_by": verified_by,
                    "errors": errors,
                    "status": status,
                }
            )
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        with LOCK:
            answer = json.dumps(RECEIVED).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    if not VERIFIERS:
        sys.exit("usage: receiver.py whsec_... [whsec_...]")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    print(f"listening on http://127.0.0.1:{server.server_port}/hook", flush=True)
    server.serve_forever()
