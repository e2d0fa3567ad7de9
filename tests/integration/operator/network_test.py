"""spec.network against a real kube-apiserver, the operator running as the chart's
ServiceAccount (docs/security.md, "Network").

Proves: every attempt gets its own immutable Secret with a fresh 64-hex token, owned by the
job, which its pods (and only its pods) reference as DDP3D_RENDEZVOUS_TOKEN, and a gang
restart moves the pods to the next attempt's Secret; spec.network.policy gives the job a
NetworkPolicy that the API server accepts (peers on every port, scrapers from the
operator's and the listed namespaces on the metrics ports only), recreated when deleted from
outside; the API server refuses a bad metricsNamespaces entry and any change of
spec.network.
"""

import base64
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (NS, SYSTEM_NS, Kube, OperatorSuite, pods_of,  # noqa: E402
                     training_job, wait_for)
from kube_rest import ApiError  # noqa: E402

NETWORKING = f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies"


def token_ref(pod):
    env = pod["spec"]["containers"][0]["env"]
    refs = [e for e in env if e["name"] == "DDP3D_RENDEZVOUS_TOKEN"]
    return refs[0]["valueFrom"]["secretKeyRef"] if len(refs) == 1 else None


class NetworkTest(OperatorSuite):
    operator_name = "op-net"

    def live_pods(self, name, attempt):
        pods = [p for p in pods_of(self.kube, self.job(name))
                if not p["metadata"].get("deletionTimestamp")
                and p["metadata"]["labels"]["ddp3d.io/attempt"] == str(attempt)]
        return pods if len(pods) == 2 else None

    def secret_token(self, name):
        secret = self.kube.get(Kube.core(NS, "secrets", name))
        return secret, base64.b64decode(secret["data"]["token"]).decode() if secret else None

    def test_each_attempt_gets_its_own_token_secret(self):
        self.kube.create(Kube.tj(NS), training_job("tok", nnodes=2, backoffLimit=2))
        pods = wait_for(lambda: self.live_pods("tok", 0), 30, "attempt 0's pods")
        job = self.job("tok")
        self.assertEqual({token_ref(p)["name"] for p in pods}, {"tok-rendezvous-0"})
        self.assertEqual({token_ref(p)["key"] for p in pods}, {"token"})
        secret, token0 = self.secret_token("tok-rendezvous-0")
        self.assertRegex(token0, r"^[0-9a-f]{64}$")
        self.assertTrue(secret["immutable"])
        self.assertEqual(secret["metadata"]["ownerReferences"][0]["uid"], job["metadata"]["uid"])
        self.assertEqual(secret["metadata"]["labels"]["ddp3d.io/attempt"], "0")
        # The token is in no pod: only the reference is.
        for p in pods:
            self.assertNotIn(token0, str(p))

        # A rank fails: the gang restarts on attempt 1 with a new Secret and a new token.
        for p in pods:
            self.kubelet.set_running(p)
        self.kubelet.set_terminated(pods[1], 137)
        pods = wait_for(lambda: self.live_pods("tok", 1), 30, "attempt 1's pods")
        self.assertEqual({token_ref(p)["name"] for p in pods}, {"tok-rendezvous-1"})
        _, token1 = self.secret_token("tok-rendezvous-1")
        self.assertRegex(token1, r"^[0-9a-f]{64}$")
        self.assertNotEqual(token1, token0)

    def test_no_secret_when_turned_off(self):
        tj = training_job("open", nnodes=1)
        tj["spec"]["network"] = {"rendezvousSecret": False}
        self.kube.create(Kube.tj(NS), tj)
        pod = wait_for(lambda: pods_of(self.kube, self.job("open")), 30, "the pod")[0]
        self.assertIsNone(token_ref(pod))
        self.assertIsNone(self.kube.get(Kube.core(NS, "secrets", "open-rendezvous-0")))

    def test_the_network_policy_admits_peers_and_scrapers_only(self):
        tj = training_job("np", nnodes=2, gpus=2)
        tj["spec"]["network"] = {"policy": True, "metricsNamespaces": ["monitoring"]}
        self.kube.create(Kube.tj(NS), tj)
        path = f"{NETWORKING}/np-ranks"
        policy = wait_for(lambda: self.kube.get(path), 30, "the NetworkPolicy")
        job = self.job("np")
        self.assertEqual(policy["metadata"]["ownerReferences"][0]["uid"], job["metadata"]["uid"])
        spec = policy["spec"]
        self.assertEqual(spec["podSelector"], {"matchLabels": {"ddp3d.io/job-name": "np"}})
        self.assertEqual(spec["policyTypes"], ["Ingress"])
        peers, scrapers = spec["ingress"]
        self.assertEqual(peers, {"from": [{"podSelector": {
            "matchLabels": {"ddp3d.io/job-name": "np"}}}]})
        self.assertEqual([f["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                          for f in scrapers["from"]], [SYSTEM_NS, "monitoring"])
        self.assertEqual(scrapers["ports"], [{"protocol": "TCP", "port": 9400, "endPort": 9401}])
        # The pods it selects are the job's pods.
        pods = wait_for(lambda: pods_of(self.kube, job), 30, "the pods")
        self.assertTrue(all(p["metadata"]["labels"]["ddp3d.io/job-name"] == "np" for p in pods))

        # Deleted from outside: the operator puts it back.
        old_uid = policy["metadata"]["uid"]
        self.kube.delete(path)
        again = wait_for(lambda: (p := self.kube.get(path)) and p["metadata"]["uid"] != old_uid
                         and p, 30, "the NetworkPolicy recreated")
        self.assertEqual(again["spec"], spec)

    def test_the_api_server_refuses_bad_network_settings(self):
        tj = training_job("badns", nnodes=1)
        tj["spec"]["network"] = {"policy": True, "metricsNamespaces": ["Not_A_Namespace"]}
        with self.assertRaises(ApiError) as e:
            self.kube.create(Kube.tj(NS), tj)
        self.assertEqual(e.exception.code, 422)
        self.assertIn("spec.network.metricsNamespaces[0]", e.exception.body)

        tj = training_job("fixed", nnodes=1)
        self.kube.create(Kube.tj(NS), tj)
        with self.assertRaises(ApiError) as e:
            self.kube.merge_patch(Kube.tj(NS, "fixed"), {"spec": {"network": {"policy": True}}})
        self.assertEqual(e.exception.code, 422)
        self.assertTrue(re.search(r"spec\.network.*is immutable", e.exception.body),
                        e.exception.body)


if __name__ == "__main__":
    unittest.main()
