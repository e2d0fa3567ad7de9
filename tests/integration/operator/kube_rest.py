"""Minimal Kubernetes REST access for the operator integration tests (stdlib only).

Uses the admin client certificate that tests/testbin/control-plane.sh writes, so the
tests can play kubelet (write pod status) and inspect objects without a kubectl
process per call.
"""

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request


class ApiError(Exception):
    def __init__(self, code, body):
        super().__init__(f"HTTP {code}: {body[:500]}")
        self.code = code
        self.body = body


class Kube:
    def __init__(self, env):
        self.base = env["APISERVER_URL"]
        self.ctx = ssl.create_default_context(cafile=env["CA_CERT"])
        self.ctx.load_cert_chain(env["ADMIN_CERT"], env["ADMIN_KEY"])

    def request(self, method, path, body=None, content_type="application/json", query=None):
        url = self.base + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=30) as resp:
                text = resp.read().decode()
                return json.loads(text) if text else None
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, e.read().decode()) from None

    # -- paths -----------------------------------------------------------------
    @staticmethod
    def core(ns, plural, name=None, sub=None):
        p = f"/api/v1/namespaces/{ns}/{plural}"
        return p + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")

    @staticmethod
    def tj(ns, name=None, sub=None):
        p = f"/apis/ddp3d.io/v1alpha1/namespaces/{ns}/trainingjobs"
        return p + (f"/{name}" if name else "") + (f"/{sub}" if sub else "")

    # -- helpers ---------------------------------------------------------------
    def list(self, path, selector=None):
        q = {"labelSelector": selector} if selector else None
        return self.request("GET", path, query=q)["items"]

    def get(self, path):
        try:
            return self.request("GET", path)
        except ApiError as e:
            if e.code == 404:
                return None
            raise

    def create(self, path, obj):
        return self.request("POST", path, obj)

    def delete(self, path):
        try:
            return self.request("DELETE", path)
        except ApiError as e:
            if e.code != 404:
                raise

    def merge_patch(self, path, patch):
        return self.request("PATCH", path, patch, "application/merge-patch+json")
