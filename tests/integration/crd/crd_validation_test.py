"""The TrainingJob CRD against a real kube-apiserver + etcd (tests/testbin).

Proves: the CRD installs and becomes Established; examples/job.yaml is accepted, and so are
examples/kueue/ (the queued job, and the queues against Kueue's own CRDs) and the KITTI
walk-through's manifests (examples/kitti/, examples/kitti-gt-db-pod.yaml: the API server and
Pod Security "restricted" accept them, they share the job's volume, config and work dir, and
name only images the documented builds make) and examples/check-dist-job.yaml;
defaults are applied by the server; a name far longer than 63 characters is
accepted; every invalid TrainingJob in the table is rejected by the API server with
an error naming the offending field; the gang shape is immutable unless suspended;
the status subresource and the printer columns work; every property of the schema has a
description (so `kubectl explain` is never blank); status conditions have the shape of
metav1.Condition (a condition without a reason is refused).
"""

import copy
import json
import os
import re
import sys
import tempfile
import time
import unittest

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "testbin"))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "integration"))
from controlplane import ControlPlane  # noqa: E402
import kueue_crds  # noqa: E402

NS = "default"
CONFIG = "configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml"
# The CUDA worker as docs/images.md builds it (REGISTRY/ddp3d/worker:0.1.0), with the
# placeholder registry the GPU examples name.
CUDA_WORKER_IMAGE = "registry.example.com/ddp3d/worker:0.1.0"

MINIMAL = {
    "apiVersion": "ddp3d.io/v1alpha1",
    "kind": "TrainingJob",
    "metadata": {"name": "minimal"},
    "spec": {"config": CONFIG, "image": "ddp3d/worker:test"},
}


def job(name, **spec):
    obj = copy.deepcopy(MINIMAL)
    obj["metadata"]["name"] = name
    obj["spec"].update(spec)
    return obj


def run_policy(name, **policy):
    return job(name, runPolicy=policy)


def without(name, field):
    obj = job(name)
    del obj["spec"][field]
    return obj


def table(out):
    """`kubectl get` output -> one {COLUMN: value} per row, cut at the header's column
    offsets (an empty cell, such as a missing label, is "")."""
    lines = out.splitlines()
    starts = [m.start() for m in re.finditer(r"\S+", lines[0])]
    names = lines[0].split()
    bounds = list(zip(starts, starts[1:] + [None]))
    return [{n: line[a:b].strip() for n, (a, b) in zip(names, bounds)} for line in lines[1:]]


# (case, manifest, substrings the API server's error must contain: the field path
# first, then what is wrong with it)
INVALID = [
    ("nnodes 0", job("bad-nnodes-0", nnodes=0),
     ["spec.nnodes", "greater than or equal to 1"]),
    ("nnodes above max", job("bad-nnodes-max", nnodes=5000),
     ["spec.nnodes", "less than or equal to 1024"]),
    ("nnodes not an integer", job("bad-nnodes-type", nnodes="two"),
     ["spec.nnodes", "must be of type integer"]),
    ("negative gpusPerNode", job("bad-gpus", gpusPerNode=-1),
     ["spec.gpusPerNode", "greater than or equal to 0"]),
    ("port 0", job("bad-port-0", port=0),
     ["spec.port", "greater than or equal to 1"]),
    ("port 70000", job("bad-port-70000", port=70000),
     ["spec.port", "less than or equal to 65535"]),
    ("metricsPort 0", job("bad-metrics-port-0", metricsPort=0),
     ["spec.metricsPort", "greater than or equal to 1"]),
    ("metricsPort not an integer", job("bad-metrics-port-str", metricsPort="9400"),
     ["spec.metricsPort", "must be of type integer"]),
    ("missing config", without("bad-no-config", "config"),
     ["spec.config", "Required value"]),
    ("empty config", job("bad-empty-config", config=""),
     ["spec.config", "at least 1 chars long"]),
    ("missing image", without("bad-no-image", "image"),
     ["spec.image", "Required value"]),
    ("unknown restartPolicy", run_policy("bad-restart", restartPolicy="Always"),
     ["spec.runPolicy.restartPolicy", 'Unsupported value: "Always"']),
    ("reserved env NNODES", job("bad-env-nnodes", env=[{"name": "NNODES", "value": "4"}]),
     ["spec.env[0].name", "env name NNODES is reserved"]),
    ("reserved env PET_FOO", job("bad-env-pet", env=[{"name": "OK_VAR", "value": "1"},
                                                     {"name": "PET_FOO", "value": "x"}]),
     ["spec.env[1].name", "env name PET_FOO is reserved"]),
    ("reserved env DDP3D_ATTEMPT", job("bad-env-ddp3d", env=[{"name": "DDP3D_ATTEMPT"}]),
     ["spec.env[0].name", "env name DDP3D_ATTEMPT is reserved"]),
    ("reserved env WORLD_SIZE", job("bad-env-ws", env=[{"name": "WORLD_SIZE", "value": "8"}]),
     ["spec.env[0].name", "env name WORLD_SIZE is reserved"]),
    ("duplicate env name", job("bad-env-dup", env=[{"name": "A", "value": "1"},
                                                   {"name": "A", "value": "2"}]),
     ["spec.env[1]", "Duplicate value"]),
    ("env value and valueFrom", job("bad-env-both", env=[
        {"name": "TOKEN", "value": "x",
         "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]),
     ["spec.env[0]", "value and valueFrom are mutually exclusive"]),
    ("env name with '='", job("bad-env-eq", env=[{"name": "A=B"}]),
     ["spec.env[0].name", "should match"]),
    ("bad cleanPodPolicy", run_policy("bad-clean", cleanPodPolicy="Some"),
     ["spec.runPolicy.cleanPodPolicy", 'Unsupported value: "Some"']),
    ("negative backoffLimit", run_policy("bad-backoff", backoffLimit=-1),
     ["spec.runPolicy.backoffLimit", "greater than or equal to 0"]),
    ("activeDeadlineSeconds 0", run_policy("bad-deadline", activeDeadlineSeconds=0),
     ["spec.runPolicy.activeDeadlineSeconds", "greater than or equal to 1"]),
    ("negative ttlSecondsAfterFinished", run_policy("bad-ttl", ttlSecondsAfterFinished=-1),
     ["spec.runPolicy.ttlSecondsAfterFinished", "greater than or equal to 0"]),
    ("suspend not a boolean", run_policy("bad-suspend", suspend="yes"),
     ["spec.runPolicy.suspend", "must be of type boolean"]),
    # --- progress and startup ---
    ("startupDeadlineSeconds 0", run_policy("bad-startup", startupDeadlineSeconds=0),
     ["spec.runPolicy.startupDeadlineSeconds", "greater than or equal to 1"]),
    ("progressDeadlineSeconds above a year",
     run_policy("bad-progress", progressDeadlineSeconds=31536001),
     ["spec.runPolicy.progressDeadlineSeconds", "less than or equal to 31536000"]),
    ("progressDeadlineSeconds not an integer",
     run_policy("bad-progress-type", progressDeadlineSeconds="10m"),
     ["spec.runPolicy.progressDeadlineSeconds", "must be of type integer"]),
    ("negative nodeLossTimeoutSeconds", run_policy("bad-node-loss", nodeLossTimeoutSeconds=-1),
     ["spec.runPolicy.nodeLossTimeoutSeconds", "greater than or equal to 0"]),
    ("nodeLossTimeoutSeconds above a year",
     run_policy("bad-node-loss-big", nodeLossTimeoutSeconds=31536001),
     ["spec.runPolicy.nodeLossTimeoutSeconds", "less than or equal to 31536000"]),
    ("elastic minNodes above nnodes", job("bad-min-nodes", nnodes=3, elastic={"minNodes": 4}),
     ["spec.elastic.minNodes", "must not exceed spec.nnodes"]),
    ("elastic minNodes 0", job("bad-min-nodes-0", nnodes=3, elastic={"minNodes": 0}),
     ["spec.elastic.minNodes", "greater than or equal to 1"]),
    ("elastic placementTimeoutSeconds 0",
     job("bad-placement", nnodes=3, elastic={"placementTimeoutSeconds": 0}),
     ["spec.elastic.placementTimeoutSeconds", "greater than or equal to 1"]),
    ("elastic growIntervalSeconds not an integer",
     job("bad-grow", nnodes=3, elastic={"growIntervalSeconds": "soon"}),
     ["spec.elastic.growIntervalSeconds", "must be of type integer"]),
]


def undescribed(schema, path=""):
    """Property paths under an OpenAPI v3 schema that have no description, e.g.
    "spec.runPolicy.backoffLimit" or "status.conditions[].reason" (array items' properties
    included). The root's metadata is left out: the API server refuses a description there
    and publishes ObjectMeta's own."""
    missing = []
    for name, prop in (schema.get("properties") or {}).items():
        at = f"{path}.{name}" if path else name
        if at == "metadata":
            continue
        if not str(prop.get("description", "")).strip():
            missing.append(at)
        missing += undescribed(prop, at)
    if isinstance(schema.get("items"), dict):
        missing += undescribed(schema["items"], path + "[]")
    if isinstance(schema.get("additionalProperties"), dict):
        missing += undescribed(schema["additionalProperties"], path + "{}")
    return missing


CONDITION = {"type": "Running", "status": "True", "reason": "AllNodesRunning",
             "message": "2 of 2 nodes running (attempt 0)",
             "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}


class SchemaWalkTest(unittest.TestCase):
    """undescribed() itself: it must see nested and array items' properties."""

    def test_finds_every_missing_description(self):
        schema = {"properties": {
            "a": {"description": "ok", "properties": {"b": {"type": "string"}}},
            "l": {"description": "ok", "items": {"properties": {
                "c": {"description": " "}, "d": {"description": "ok"}}}},
            "e": {"type": "integer"}, "metadata": {"type": "object"}}}
        self.assertEqual(undescribed(schema), ["a.b", "l[].c", "e"])


class TrainingJobCRDTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ddp3d-crd-")
        cls.cp = ControlPlane(os.path.join(cls.tmp.name, "cp"))
        cls.cp.start()
        print(f"\ncontrol plane started in {cls.cp.start_seconds:.1f}s "
              f"({cls.cp.env['APISERVER_URL']})", file=sys.stderr)
        try:
            t0 = time.monotonic()
            cls.cp.kubectl("apply", "-f", os.path.join(SOURCE_DIR, "crds"), check=True)
            cls.cp.wait_established("trainingjobs.ddp3d.io")
            print(f"CRD established in {time.monotonic() - t0:.1f}s", file=sys.stderr)
        except BaseException:
            cls.cp.stop()
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            cls.cp.stop()
        finally:
            cls.tmp.cleanup()

    # -- helpers -------------------------------------------------------------
    def create(self, obj, validate="false"):
        # --validate=false: the rejection must come from the API server's schema, not
        # from kubectl's client-side checks.
        return self.cp.kubectl("-n", NS, "create", f"--validate={validate}", "-f", "-",
                               stdin=json.dumps(obj))

    def get(self, name):
        res = self.cp.kubectl("-n", NS, "get", "trainingjob", name, "-o", "json", check=True)
        return json.loads(res.stdout)

    def delete(self, name):
        self.cp.kubectl("-n", NS, "delete", "trainingjob", name, "--wait=false",
                        "--ignore-not-found")

    # -- tests ---------------------------------------------------------------
    def test_crd_served_with_short_name_and_status_subresource(self):
        res = self.cp.kubectl("api-resources", "--api-group=ddp3d.io", "-o", "wide", check=True)
        line = next(l for l in res.stdout.splitlines() if l.startswith("trainingjobs"))
        self.assertIn(" tj ", line)
        self.assertIn("ddp3d.io/v1alpha1", line)
        self.assertIn("TrainingJob", line)
        self.assertIn("true", line.split()[3])  # NAMESPACED
        crd = json.loads(self.cp.kubectl("get", "crd", "trainingjobs.ddp3d.io", "-o", "json",
                                         check=True).stdout)
        self.assertEqual(crd["spec"]["versions"][0]["subresources"], {"status": {}})

    def test_every_schema_property_has_a_description(self):
        # As the API server serves it: what `kubectl explain` shows.
        crd = json.loads(self.cp.kubectl("get", "crd", "trainingjobs.ddp3d.io", "-o", "json",
                                         check=True).stdout)
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            self.assertTrue(schema.get("description", "").strip(), "the root has no description")
            missing = undescribed(schema)
            self.assertEqual(missing, [], f"{version['name']}: properties without a description "
                             f"(add one to crds/trainingjobs.ddp3d.io.yaml): {', '.join(missing)}")
        # Deep fields, an embedded pod-template field and a status condition field included.
        for field, text in [("trainingjob.spec.runPolicy.nodeLossTimeoutSeconds", "default 30"),
                            ("trainingjob.spec.template.spec.containers.securityContext.privileged",
                             "podSecurity Restricted"),
                            ("trainingjob.status.conditions.observedGeneration",
                             "metadata.generation")]:
            with self.subTest(field=field):
                res = self.cp.kubectl("explain", field)
                self.assertEqual(res.returncode, 0, res.stderr)
                self.assertIn(text, " ".join(res.stdout.split()))

    def test_status_conditions_are_metav1_conditions(self):
        self.assertEqual(self.create(job("conditions")).returncode, 0)

        def write(**changes):
            cond = {k: v for k, v in {**CONDITION, **changes}.items() if v is not None}
            return self.cp.kubectl("-n", NS, "patch", "trainingjob", "conditions",
                                   "--subresource=status", "--type=merge",
                                   "-p", json.dumps({"status": {"conditions": [cond]}}))
        try:
            ok = write(message="")  # message is required but may be empty
            self.assertEqual(ok.returncode, 0, ok.stderr)
            self.assertEqual(self.get("conditions")["status"]["conditions"],
                             [{**CONDITION, "message": ""}])
            # Kueue's own reasons and the like pass the pattern.
            for reason in ("Pending", "KueueNotServed", "Inadmissible", "Reason_1,a:b"):
                with self.subTest(reason=reason):
                    res = write(reason=reason)
                    self.assertEqual(res.returncode, 0, res.stderr)
            for case, changes, expected in [
                    ("no reason", {"reason": None}, ["status.conditions[0].reason",
                                                     "Required value"]),
                    ("empty reason", {"reason": ""}, ["status.conditions[0].reason"]),
                    ("reason with spaces", {"reason": "All nodes running"},
                     ["status.conditions[0].reason", "should match"]),
                    ("reason with a dash", {"reason": "All-Nodes"},
                     ["status.conditions[0].reason", "should match"]),
                    ("reason too long", {"reason": "R" * 1025},
                     ["status.conditions[0].reason", "1024"]),
                    ("no message", {"message": None}, ["status.conditions[0].message",
                                                       "Required value"]),
                    ("message too long", {"message": "m" * 32769},
                     ["status.conditions[0].message", "32768"]),
                    ("no lastTransitionTime", {"lastTransitionTime": None},
                     ["status.conditions[0].lastTransitionTime", "Required value"]),
                    ("lastTransitionTime not a date-time", {"lastTransitionTime": "yesterday"},
                     ["status.conditions[0].lastTransitionTime"]),
                    ("status Maybe", {"status": "Maybe"},
                     ["status.conditions[0].status", 'Unsupported value: "Maybe"']),
                    ("negative observedGeneration", {"observedGeneration": -1},
                     ["status.conditions[0].observedGeneration", "greater than or equal to 0"]),
                    ("type with spaces", {"type": "Is Running"},
                     ["status.conditions[0].type", "should match"])]:
                with self.subTest(case=case):
                    res = write(**changes)
                    self.assertNotEqual(res.returncode, 0, f"{case}: accepted")
                    for text in expected:
                        self.assertIn(text, res.stderr, f"{case}: error lacks {text!r}")
                    self.assertIn("is invalid", res.stderr)  # the API server's 422
            # A refused write leaves the stored conditions as they were.
            self.assertEqual(self.get("conditions")["status"]["conditions"][0]["reason"],
                             "Reason_1,a:b")
        finally:
            self.delete("conditions")

    def test_example_job_applies(self):
        example = os.path.join(SOURCE_DIR, "examples", "job.yaml")
        res = self.cp.kubectl("-n", NS, "apply", "-f", example)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("trainingjob.ddp3d.io/pp-car", res.stdout)
        spec = self.get("pp-car")["spec"]
        self.assertEqual(spec["nnodes"], 2)
        self.assertEqual(spec["gpusPerNode"], 8)
        self.assertEqual(spec["config"], CONFIG)
        self.assertEqual(spec["template"]["spec"]["volumes"][0]["name"], "data")  # not pruned
        self.assertEqual(spec["template"]["spec"]["securityContext"]["fsGroup"], 10001)
        self.assertEqual(spec["env"][1]["valueFrom"]["configMapKeyRef"]["name"], "nccl")
        self.assertEqual(spec["image"], CUDA_WORKER_IMAGE)
        with open(os.path.join(SOURCE_DIR, "docs", "images.md")) as f:
            self.assertIn("docker/worker.Dockerfile     -t REGISTRY/ddp3d/worker:0.1.0", f.read())

    def test_check_dist_example_applies(self):
        """examples/check-dist-job.yaml (docs/operations.md): the API server keeps the
        template's own command, which runs the worker's launcher and check-dist."""
        example = os.path.join(SOURCE_DIR, "examples", "check-dist-job.yaml")
        res = self.cp.kubectl("-n", NS, "apply", "-f", example)
        self.assertEqual(res.returncode, 0, res.stderr)
        try:
            spec = self.get("check-dist")["spec"]
            command = spec["template"]["spec"]["containers"][0]["command"]
            self.assertEqual(command[:5], ["/usr/local/bin/ddp3d", "launch", "--",
                                           "/usr/local/bin/ddp3d", "check-dist"])
            self.assertEqual(spec["runPolicy"]["restartPolicy"], "Never")
            self.assertEqual(spec["image"], CUDA_WORKER_IMAGE)
            self.assertTrue(os.path.isfile(os.path.join(SOURCE_DIR, spec["config"])))
            with open(os.path.join(SOURCE_DIR, "worker", "main.cpp")) as f:
                main = f.read()
            self.assertIn('command == "check-dist"', main)
            self.assertIn('command == "launch"', main)
        finally:
            self.delete("check-dist")

    def test_kitti_examples_apply_under_restricted_pod_security(self):
        """docs/kitti-on-kubernetes.md's manifests: each is accepted by the API server (server
        dry run) in a namespace that enforces Pod Security "restricted", mounts the PVC that
        examples/kitti/pvc.yaml makes and examples/job.yaml mounts, and runs what the job
        trains (config, work dir) with the worker's real subcommands and scripts."""
        ns = "kitti-example"
        self.cp.kubectl("create", "namespace", ns, check=True)
        self.cp.kubectl("label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted",
                        check=True)
        # No controller-manager here: the ServiceAccount admission plugin needs the default one.
        self.cp.kubectl("-n", ns, "create", "serviceaccount", "default")
        examples = os.path.join(SOURCE_DIR, "examples")
        applied = {}
        for name in ("kitti/pvc.yaml", "kitti/data-pod.yaml", "kitti-gt-db-pod.yaml",
                     "kitti/dist-test-pod.yaml"):
            with self.subTest(example=name):
                res = self.cp.kubectl("-n", ns, "apply", "--dry-run=server", "-o", "json", "-f",
                                      os.path.join(examples, name))
                self.assertEqual(res.returncode, 0, res.stderr)
                self.assertNotIn("Warning", res.stderr)  # Pod Security warns before it refuses
                applied[name] = json.loads(res.stdout)
        job_spec = json.loads(self.cp.kubectl(
            "create", "--dry-run=client", "-o", "json", "-f",
            os.path.join(examples, "job.yaml"), check=True).stdout)["spec"]
        claim = applied["kitti/pvc.yaml"]["metadata"]["name"]
        self.assertEqual(applied["kitti/pvc.yaml"]["spec"]["accessModes"], ["ReadWriteMany"])
        self.assertEqual(job_spec["template"]["spec"]["volumes"][0]["persistentVolumeClaim"],
                         {"claimName": claim})
        work_dir = job_spec["args"][job_spec["args"].index("--work-dir") + 1]
        with open(os.path.join(SOURCE_DIR, "tools", "build_images.sh")) as f:
            built = set(re.findall(r"^#\s+\S+\.tar\s+docker\.io/(\S+)$", f.read(), re.M))
        for name in ("kitti/data-pod.yaml", "kitti-gt-db-pod.yaml", "kitti/dist-test-pod.yaml"):
            pod = applied[name]["spec"]
            with self.subTest(example=name):
                self.assertEqual(pod["volumes"][0]["persistentVolumeClaim"], {"claimName": claim})
                self.assertEqual(pod["containers"][0]["volumeMounts"][0]["mountPath"],
                                 "/workspace/ddp3d/data")
                self.assertEqual(pod["securityContext"]["fsGroup"], 10001)
                image = pod["containers"][0]["image"]
                self.assertIn(image, built | {CUDA_WORKER_IMAGE})
        # create-gt-db is the worker's subcommand; the GPU pod gets a GPU and the CUDA image.
        gt_db = applied["kitti-gt-db-pod.yaml"]["spec"]["containers"][0]["command"]
        self.assertEqual(gt_db[:4], ["/usr/local/bin/ddp3d", "data", "create-gt-db", "data/kitti"])
        with open(os.path.join(SOURCE_DIR, "worker", "cli", "data_command.cpp")) as f:
            self.assertIn('"create-gt-db"', f.read())
        test = applied["kitti/dist-test-pod.yaml"]["spec"]["containers"][0]
        self.assertEqual(test["image"], CUDA_WORKER_IMAGE)
        self.assertEqual(test["resources"]["limits"]["nvidia.com/gpu"], "1")
        script = test["command"][-1]
        self.assertIn(f"bash tools/dist_test.sh {job_spec['config']} "
                      f'"$(cat {work_dir}/last_checkpoint)" 1 --work-dir {work_dir}/test', script)
        self.assertTrue(os.path.isfile(os.path.join(SOURCE_DIR, "tools", "dist_test.sh")))

    def test_kueue_examples_apply(self):
        # Kueue's CRDs as a cluster with Kueue has them (schema and CEL rules; no webhook here).
        kueue_crds.install(self.cp)
        ns = "kueue-example"
        self.cp.kubectl("create", "namespace", ns, check=True)
        examples = os.path.join(SOURCE_DIR, "examples", "kueue")
        res = self.cp.kubectl("-n", ns, "apply", "-f", os.path.join(examples, "queues.yaml"),
                              "-f", os.path.join(examples, "queued-job.yaml"))
        self.assertEqual(res.returncode, 0, res.stderr)
        for created in ("resourceflavor.kueue.x-k8s.io/default-flavor",
                        "clusterqueue.kueue.x-k8s.io/ddp3d-demo",
                        "localqueue.kueue.x-k8s.io/ddp3d-demo", "trainingjob.ddp3d.io/pp-queued"):
            self.assertIn(created, res.stdout)
        job = json.loads(self.cp.kubectl("-n", ns, "get", "tj", "pp-queued", "-o", "json",
                                         check=True).stdout)
        queue = job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
        lq = json.loads(self.cp.kubectl("-n", ns, "get", "localqueue", queue, "-o", "json",
                                        check=True).stdout)
        cq = json.loads(self.cp.kubectl("get", "clusterqueue", lq["spec"]["clusterQueue"], "-o",
                                        "json", check=True).stdout)
        # The quota covers what the job's ranks request (and the comment says: two such jobs).
        requests = job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
        quota = {r["name"]: r["nominalQuota"]
                 for r in cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
        self.assertEqual(requests, {"cpu": "500m", "memory": "1Gi"})
        self.assertEqual(job["spec"]["nnodes"], 2)
        self.assertEqual((quota["cpu"], quota["memory"]), ("2", "4Gi"))
        # The same demo as examples/cpu-demo, on its volume.
        with open(os.path.join(SOURCE_DIR, "examples", "cpu-demo", "job.yaml")) as f:
            demo_config = re.search(r"^  config: (\S+)$", f.read(), re.M).group(1)
        self.assertEqual(job["spec"]["config"], demo_config)
        self.assertTrue(os.path.isfile(os.path.join(SOURCE_DIR, demo_config)), demo_config)
        res = self.cp.kubectl("-n", ns, "get", "tj", "pp-queued", check=True)
        self.assertEqual(table(res.stdout)[0]["QUEUE"], "ddp3d-demo")

    def test_example_config_exists_in_repo(self):
        with open(os.path.join(SOURCE_DIR, "examples", "job.yaml")) as f:
            config = re.search(r"^  config: (\S+)$", f.read(), re.M).group(1)
        self.assertEqual(config, CONFIG)
        self.assertTrue(os.path.isfile(os.path.join(SOURCE_DIR, config)), config)

    def test_defaults_applied_by_server(self):
        self.assertEqual(self.create(job("defaults")).returncode, 0)
        try:
            spec = self.get("defaults")["spec"]
            self.assertEqual(spec["nnodes"], 1)
            self.assertEqual(spec["gpusPerNode"], 0)
            self.assertEqual(spec["port"], 29500)
            self.assertEqual(spec["metricsPort"], 9400)
            self.assertEqual(spec["runPolicy"], {"restartPolicy": "OnFailure", "backoffLimit": 3,
                                                 "disruptionLimit": 10,
                                                 "cleanPodPolicy": "Running", "suspend": False,
                                                 "autoResume": True,
                                                 "nodeLossTimeoutSeconds": 30,
                                                 "gangScheduling": True})
            self.assertEqual(spec["podSecurity"], "Restricted")
        finally:
            self.delete("defaults")

    def test_elastic_defaults_applied_by_server(self):
        self.assertEqual(self.create(job("elastic", nnodes=3, elastic={})).returncode, 0)
        try:
            self.assertEqual(self.get("elastic")["spec"]["elastic"],
                             {"minNodes": 1, "placementTimeoutSeconds": 60,
                              "growIntervalSeconds": 300})
        finally:
            self.delete("elastic")

    def test_name_far_longer_than_63_chars_is_accepted(self):
        name = "pointpillars-kitti-car-" + "x" * 150 + "-run-1"
        self.assertGreater(len(name), 63 * 2)
        res = self.create(job(name, nnodes=3))
        self.assertEqual(res.returncode, 0, res.stderr)
        try:
            self.assertEqual(self.get(name)["metadata"]["name"], name)
        finally:
            self.delete(name)

    def test_invalid_jobs_rejected_naming_the_field(self):
        for case, obj, expected in INVALID:
            with self.subTest(case=case):
                res = self.create(obj)
                self.assertNotEqual(res.returncode, 0, f"{case}: accepted but must be rejected")
                for text in expected:
                    self.assertIn(text, res.stderr, f"{case}: error lacks {text!r}")
                self.assertIn("is invalid", res.stderr)  # the API server's 422, not kubectl
                gone = self.cp.kubectl("-n", NS, "get", "trainingjob", obj["metadata"]["name"])
                self.assertIn("NotFound", gone.stderr, f"{case}: object was stored")

    def test_unknown_field_rejected_with_strict_validation(self):
        obj = job("typo")
        obj["spec"]["nnode"] = 2
        res = self.create(obj, validate="strict")
        self.assertNotEqual(res.returncode, 0)
        self.assertIn('unknown field "spec.nnode"', res.stderr)

    def test_gang_shape_changes_only_while_suspended(self):
        self.assertEqual(self.create(job("resize", nnodes=2)).returncode, 0)
        try:
            res = self.cp.kubectl("-n", NS, "patch", "trainingjob", "resize", "--type=merge",
                                  "-p", '{"spec":{"nnodes":4}}')
            self.assertNotEqual(res.returncode, 0)
            self.assertIn("spec.nnodes", res.stderr)
            self.assertIn("may change only while spec.runPolicy.suspend is true", res.stderr)
            # runPolicy itself stays mutable: suspending is how a job is reshaped.
            self.cp.kubectl("-n", NS, "patch", "trainingjob", "resize", "--type=merge", "-p",
                            '{"spec":{"runPolicy":{"suspend":true}}}', check=True)
            self.cp.kubectl("-n", NS, "patch", "trainingjob", "resize", "--type=merge", "-p",
                            '{"spec":{"nnodes":4,"image":"ddp3d/worker:v2"}}', check=True)
            self.assertEqual(self.get("resize")["spec"]["nnodes"], 4)
        finally:
            self.delete("resize")

    def test_status_subresource_and_printer_columns(self):
        self.assertEqual(self.create(job("columns", nnodes=4, gpusPerNode=2)).returncode, 0)
        try:
            # A write to the main resource must not touch status...
            obj = self.get("columns")
            obj["status"] = {"phase": "Failed"}
            self.cp.kubectl("-n", NS, "replace", "-f", "-", stdin=json.dumps(obj), check=True)
            self.assertNotIn("status", self.get("columns"))
            # ...only the status subresource does, and it is schema-checked too.
            status = {"status": {"phase": "Running", "restarts": 1, "attempt": 1,
                                 "observedGeneration": 1, "size": 3,
                                 "nodes": [{"rank": 0, "pod": "columns-node-0", "phase": "Running"}],
                                 "conditions": [CONDITION]}}
            self.cp.kubectl("-n", NS, "patch", "trainingjob", "columns", "--subresource=status",
                            "--type=merge", "-p", json.dumps(status), check=True)
            self.assertEqual(self.get("columns")["status"]["nodes"][0]["pod"], "columns-node-0")
            bad = self.cp.kubectl("-n", NS, "patch", "trainingjob", "columns",
                                  "--subresource=status", "--type=merge",
                                  "-p", '{"status":{"phase":"Exploded"}}')
            self.assertNotEqual(bad.returncode, 0)
            self.assertIn("status.phase", bad.stderr)

            res = self.cp.kubectl("-n", NS, "get", "tj", "columns", check=True)
            header, row = res.stdout.splitlines()[:2]
            self.assertEqual(header.split(),
                             ["NAME", "PHASE", "NODES", "SIZE", "GPUS/NODE", "RESTARTS", "EPOCH",
                              "STEP", "ETA", "QUEUE", "AGE"])
            self.assertEqual(row.split()[:6], ["columns", "Running", "4", "3", "2", "1"])
            self.assertEqual(table(res.stdout)[0]["QUEUE"], "")  # not a queued job
            # Queued: the phase a job labelled kueue.x-k8s.io/queue-name waits in.
            self.cp.kubectl("-n", NS, "patch", "trainingjob", "columns", "--subresource=status",
                            "--type=merge", "-p", '{"status":{"phase":"Queued"}}', check=True)
            self.cp.kubectl("-n", NS, "label", "trainingjob", "columns",
                            "kueue.x-k8s.io/queue-name=team-a", check=True)
            cols = table(self.cp.kubectl("-n", NS, "get", "tj", "columns", check=True).stdout)[0]
            self.assertEqual((cols["PHASE"], cols["QUEUE"]), ("Queued", "team-a"))
            self.cp.kubectl("-n", NS, "patch", "trainingjob", "columns", "--subresource=status",
                            "--type=merge", "-p", '{"status":{"phase":"Running"}}', check=True)

            # Progress, the stall record and the per-node fields are kept (not pruned), and
            # the progress columns show them.
            progress = {"status": {
                "attemptStartTime": "2026-01-01T00:00:00Z",
                "progress": {"attempt": 1, "step": 1234, "epoch": 3, "maxSteps": 37120,
                             "stepsPerSecond": 2.5, "etaSeconds": 14354, "eta": "3h59m",
                             "estimatedCompletionTime": "2026-01-01T04:00:00Z",
                             "lastProgressTime": "2026-01-01T00:00:00Z"},
                "lastStall": {"attempt": 0, "rank": 1, "pod": "columns-node-1",
                              "node": "gpu-7", "step": 1000, "time": "2026-01-01T00:00:00Z",
                              "message": "no optimizer step for 600s"},
                "nodes": [{"rank": 0, "pod": "columns-node-0", "phase": "Running",
                           "step": 1234, "message": "metrics: HTTP 404"}]}}
            self.cp.kubectl("-n", NS, "patch", "trainingjob", "columns", "--subresource=status",
                            "--type=merge", "-p", json.dumps(progress), check=True)
            stored = self.get("columns")["status"]
            for key in ("attemptStartTime", "progress", "lastStall"):
                self.assertEqual(stored[key], progress["status"][key], key)
            self.assertEqual(stored["nodes"][0]["step"], 1234)
            res = self.cp.kubectl("-n", NS, "get", "tj", "columns", check=True)
            self.assertEqual(res.stdout.splitlines()[1].split()[6:9], ["3", "1234", "3h59m"])
            wide = self.cp.kubectl("-n", NS, "get", "tj", "columns", "-o", "wide", check=True)
            self.assertIn("STEPS/S", wide.stdout.splitlines()[0].split())
            self.assertIn("2.5", wide.stdout.splitlines()[1].split())
            bad = self.cp.kubectl("-n", NS, "patch", "trainingjob", "columns",
                                  "--subresource=status", "--type=merge",
                                  "-p", '{"status":{"progress":{"step":-1}}}')
            self.assertNotEqual(bad.returncode, 0)
            self.assertIn("status.progress.step", bad.stderr)
        finally:
            self.delete("columns")


if __name__ == "__main__":
    unittest.main(verbosity=2)
