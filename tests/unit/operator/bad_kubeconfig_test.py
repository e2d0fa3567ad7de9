"""The real `ddp3d-operator` binary with a bad kubeconfig: a CA that is not PEM, a kubeconfig
that is a FIFO or /dev/zero. Each must exit 2 with one line naming the problem (it used to
abort on an uncaught exception for the CA), within a deadline.
"""
import base64
import os
import subprocess
import tempfile
import unittest

BINARY = os.path.join(os.environ["DDP3D_BINARY_DIR"], "operator", "ddp3d-operator")


def kubeconfig(cluster_extra):
    return ("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            "clusters: [{name: k, cluster: {server: \"https://127.0.0.1:1\", %s}}]\n"
            "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
            "users: [{name: u, user: {token: t}}]\n" % cluster_extra)


def run_operator(path):
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG",
                                                             "KUBERNETES_SERVICE_HOST")}
    p = subprocess.run([BINARY, "--kubeconfig", path, "--metrics-address", "0",
                        "--health-address", "0"], env=env, capture_output=True, text=True,
                       timeout=30)
    return p.returncode, p.stdout + p.stderr


class BadKubeconfig(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ddp3d-bad-kubeconfig-")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_ca_that_is_not_pem_is_an_error_not_an_abort(self):
        data = base64.b64encode(b"this is not a certificate").decode()
        path = self.write("config", kubeconfig("certificate-authority-data: " + data))
        code, text = run_operator(path)
        self.assertEqual(code, 2, text)
        self.assertIn("certificate authority is not valid PEM", text)
        self.assertNotIn("terminate called", text)

    def test_a_ca_file_that_is_a_fifo_is_named(self):
        fifo = os.path.join(self.tmp.name, "ca.crt")
        os.mkfifo(fifo)
        code, text = run_operator(self.write("config", kubeconfig("certificate-authority: ca.crt")))
        self.assertEqual(code, 2, text)
        self.assertIn("PEM file is a FIFO", text)

    def test_a_kubeconfig_that_is_a_fifo_or_a_device_is_named(self):
        fifo = os.path.join(self.tmp.name, "config")
        os.mkfifo(fifo)
        code, text = run_operator(fifo)
        self.assertEqual(code, 2, text)
        self.assertIn("kubeconfig is a FIFO", text)
        code, text = run_operator("/dev/zero")
        self.assertEqual(code, 2, text)
        self.assertIn("kubeconfig is a character device", text)


if __name__ == "__main__":
    unittest.main()
