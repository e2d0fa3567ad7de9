"""A small Kubernetes REST client (stdlib only) for the e2e kubelet and tests.

Authenticates with the client certificate of a control plane started by
tests/testbin/control-plane.sh (its DIR/env names CA_CERT, ADMIN_CERT, ADMIN_KEY and
APISERVER_URL), verifying the server against the test CA.
"""

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request


class ApiError(RuntimeError):
    def __init__(self, method, path, status, body):
        super().__init__(f"{method} {path}: HTTP {status}: {body[:500]}")
        self.status = status


class KubeApi:
    def __init__(self, env):
        """`env`: the KEY=VALUE mapping of a control plane's DIR/env file."""
        self.base = env["APISERVER_URL"].rstrip("/")
        self.ctx = ssl.create_default_context(cafile=env["CA_CERT"])
        self.ctx.load_cert_chain(env["ADMIN_CERT"], env["ADMIN_KEY"])

    def request(self, method, path, body=None, content_type="application/json", query=None,
                timeout=10):
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            raise ApiError(method, path, e.code, e.read().decode(errors="replace")) from None

    # -- convenience ------------------------------------------------------------
    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body):
        return self.request("POST", path, body)

    def merge_patch(self, path, body):
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def delete(self, path, body=None):
        return self.request("DELETE", path, body)

    def list_pods(self, namespace):
        return self.get(f"/api/v1/namespaces/{namespace}/pods")["items"]

    def training_job(self, namespace, name):
        return self.get(f"/apis/ddp3d.io/v1alpha1/namespaces/{namespace}/trainingjobs/{name}")
