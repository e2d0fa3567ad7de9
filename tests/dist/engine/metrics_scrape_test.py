"""The worker's /metrics endpoint in a real 2-process training run over Gloo.

Both ranks of configs/toy/toy_regression_2proc.yaml are started with the launcher's environment
contract plus what the operator sets (DDP3D_METRICS_PORT, DDP3D_JOB). While they train, the test
scrapes each rank's port (base + LOCAL_RANK) over HTTP and checks: every documented training
family is there, labelled with the job and the rank; steps increase between scrapes; the
counters agree with each other (samples = steps x batch size; one all-reduce per step); and the
real `promtool check metrics` accepts the text. A real Prometheus server scraping both ranks
answers every query of the chart's training dashboard, and the chart's training alerts stay
quiet on the healthy run. A port that is already taken stops the rank with an error naming it,
before any rendezvous.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

import yaml  # python3-yaml (a dependency of clang-tidy, which tools/setup.sh installs)

CHART = os.path.join(os.environ["DDP3D_SOURCE_DIR"], "charts", "ddp3d")
BINARY = os.path.join(os.environ["DDP3D_BINARY_DIR"], "worker", "ddp3d")
CONFIG = os.path.join(os.environ["DDP3D_SOURCE_DIR"], "configs", "toy", "toy_regression_2proc.yaml")
WORLD = 2
JOB = "metrics-dist-test"
BATCH = 16  # train_dataloader.batch_size of the toy config (per rank)
# Long enough to be scraped several times; no checkpoint or validation until the last epoch.
LONG_RUN = ["--cfg-options", "train_cfg.max_epochs=400", "train_cfg.val_interval=1000",
            "default_hooks.checkpoint.interval=-1"]
FAMILIES = {  # name -> type, as docs/metrics.md documents them
    "ddp3d_train_steps_total": "counter",
    "ddp3d_train_samples_total": "counter",
    "ddp3d_train_loss": "gauge",
    "ddp3d_train_epoch": "gauge",
    "ddp3d_train_lr": "gauge",
    "ddp3d_step_seconds": "histogram",
    "ddp3d_allreduce_seconds": "histogram",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_pair():
    """A base port with base + 1 free too (one port per local rank)."""
    for _ in range(50):
        base = free_port()
        if base >= 65535:
            continue
        try:
            with socket.socket() as s:
                s.bind(("0.0.0.0", base + 1))
            return base
        except OSError:
            continue
    raise RuntimeError("no two consecutive free ports")


def start_ranks(args, log_dir, extra_env):
    port = free_port()
    procs = []
    for rank in range(WORLD):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(WORLD), GROUP_RANK="0", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1", **extra_env)
        with open(os.path.join(log_dir, "rank%d.txt" % rank), "w") as out:
            procs.append(subprocess.Popen([BINARY, "train", CONFIG, "--launcher", "pytorch"] + args,
                                          env=env, stdout=out, stderr=subprocess.STDOUT,
                                          start_new_session=True))
    return procs


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def samples(text):
    """{(name, frozenset(labels)): value} of a text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        assert m, "unparsable sample line: %r" % line
        labels = frozenset(re.findall(r'([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def value(parsed, name, rank, **extra):
    labels = {"job_name": JOB, "rank": str(rank)}
    labels.update(extra)
    return parsed[(name, frozenset(labels.items()))]


def consistent(parsed, rank):
    steps = value(parsed, "ddp3d_train_steps_total", rank)
    return (value(parsed, "ddp3d_train_samples_total", rank) == BATCH * steps
            and value(parsed, "ddp3d_step_seconds_count", rank) == steps
            and value(parsed, "ddp3d_allreduce_seconds_count", rank) == steps
            and value(parsed, "ddp3d_train_epoch", rank) == -(-steps // 32))


class MetricsScrape(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddp3d_metrics_dist_")
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def output(self, rank):
        with open(os.path.join(self.tmp, "rank%d.txt" % rank)) as f:
            return f.read()

    def scrape_when(self, port, rank, ready, timeout=60):
        """Scrapes `port` until ready(parsed) holds; returns (text, parsed)."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            for p in self.procs:
                self.assertIsNone(p.poll(), "a rank exited early:\n" + self.output(rank))
            try:
                status, ctype, text = get(port, "/metrics")
                self.assertEqual(status, 200)
                self.assertTrue(ctype.startswith("text/plain; version=0.0.4"), ctype)
                parsed = samples(text)
                last = text
                if ready(parsed):
                    return text, parsed
            except (ConnectionError, OSError, KeyError):
                pass  # not listening yet, or the series not there yet
            time.sleep(0.2)
        self.fail("rank %d: condition not reached in %ds; last scrape:\n%s\n%s"
                  % (rank, timeout, last, self.output(rank)))

    def test_every_rank_serves_the_documented_families_while_training(self):
        base = free_port_pair()
        work = os.path.join(self.tmp, "work")
        self.procs = start_ranks(["--work-dir", work] + LONG_RUN, self.tmp,
                                 {"DDP3D_METRICS_PORT": str(base), "DDP3D_JOB": JOB})
        for rank in range(WORLD):
            port = base + rank
            # First scrape once a logging window has ended (the loss gauge exists then).
            text1, s1 = self.scrape_when(port, rank,
                                         lambda s: value(s, "ddp3d_train_loss", rank) > 0)
            steps1 = value(s1, "ddp3d_train_steps_total", rank)
            # A scrape may land between two families' updates of one step; wait for one that
            # shows every counter of the same step (a wrong counter never gets there).
            text2, s2 = self.scrape_when(
                port, rank, lambda s: value(s, "ddp3d_train_steps_total", rank) >= steps1 + 10
                and consistent(s, rank))
            steps2 = value(s2, "ddp3d_train_steps_total", rank)
            print("rank %d (port %d): steps %d -> %d, epoch %g, loss %.5f, step mean %.4fs, "
                  "allreduce mean %.6fs" % (
                      rank, port, steps1, steps2, value(s2, "ddp3d_train_epoch", rank),
                      value(s2, "ddp3d_train_loss", rank),
                      value(s2, "ddp3d_step_seconds_sum", rank) / value(s2, "ddp3d_step_seconds_count", rank),
                      value(s2, "ddp3d_allreduce_seconds_sum", rank)
                      / value(s2, "ddp3d_allreduce_seconds_count", rank)))
            self.assertGreater(steps2, steps1)
            for text in (text1, text2):
                for name, kind in FAMILIES.items():
                    self.assertIn("# TYPE %s %s\n" % (name, kind), text)
            labels = '{job_name="%s",rank="%d"' % (JOB, rank)
            for name in FAMILIES:
                suffix = "_count" if FAMILIES[name] == "histogram" else ""
                self.assertIn(name + suffix + labels, text2)
            # The counters agree: BATCH samples per step, one all-reduce per step (no
            # accumulation), every step timed; the toy 1024 samples are 32 steps per epoch.
            count = value(s2, "ddp3d_step_seconds_count", rank)
            self.assertEqual(value(s2, "ddp3d_train_samples_total", rank), BATCH * steps2)
            self.assertEqual(count, steps2)
            self.assertEqual(value(s2, "ddp3d_allreduce_seconds_count", rank), steps2)
            self.assertEqual(value(s2, "ddp3d_step_seconds_bucket", rank, le="+Inf"), count)
            self.assertEqual(value(s2, "ddp3d_train_epoch", rank), -(-steps2 // 32))
            self.assertGreater(value(s2, "ddp3d_train_lr", rank), 0)
            self.assertGreater(s2[("process_resident_memory_bytes", frozenset())], 0)
            # Prometheus' own checker, lint included.
            res = subprocess.run(["promtool", "check", "metrics"], input=text2,
                                 capture_output=True, text=True)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
            self.assertEqual(res.stdout + res.stderr, "")
            status, _, body = get(port, "/readyz")
            self.assertEqual((status, body.strip()), (200, "ready"))
            self.assertIn("metrics: serving http://0.0.0.0:%d/metrics (DDP3D_METRICS_PORT=%d"
                          % (port, base), self.output(rank))

    def test_prometheus_answers_the_dashboard_queries_and_the_alerts_stay_quiet(self):
        base = free_port_pair()
        self.procs = start_ranks(["--work-dir", os.path.join(self.tmp, "work")] + LONG_RUN,
                                 self.tmp, {"DDP3D_METRICS_PORT": str(base), "DDP3D_JOB": JOB})
        prom_port = free_port()
        with open(os.path.join(self.tmp, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n- job_name: ddp3d-workers\n  static_configs:\n"
                    "  - targets: ['127.0.0.1:%d', '127.0.0.1:%d']\n" % (base, base + 1))
        with open(os.path.join(self.tmp, "prometheus.log"), "w") as log:
            prom = subprocess.Popen(
                ["prometheus", "--config.file=" + os.path.join(self.tmp, "prometheus.yml"),
                 "--storage.tsdb.path=" + os.path.join(self.tmp, "tsdb"),
                 "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
                stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(prom)

        def query(expr):
            url = "http://127.0.0.1:%d/api/v1/query?%s" % (
                prom_port, urllib.parse.urlencode({"query": expr}))
            with urllib.request.urlopen(url, timeout=5) as r:
                answer = json.load(r)
            self.assertEqual(answer["status"], "success", answer)
            return answer["data"]["result"]

        # rate() needs two samples of every series in its window: wait for steps on both ranks
        # and a few scrapes.
        deadline = time.time() + 60
        series = []
        while time.time() < deadline:
            try:
                series = query('ddp3d_train_steps_total{job_name="%s"} and '
                               'ddp3d_train_loss and rate(ddp3d_train_steps_total[1m]) > 0' % JOB)
            except (ConnectionError, OSError):
                series = []
            if len(series) == WORLD:
                break
            time.sleep(0.5)
        with open(os.path.join(self.tmp, "prometheus.log")) as f:
            prom_log = f.read()
        self.assertEqual(sorted(s["metric"]["rank"] for s in series), ["0", "1"], prom_log)
        time.sleep(2)

        with open(os.path.join(CHART, "dashboards", "training.json")) as f:
            dashboard = json.load(f)
        for panel in dashboard["panels"]:
            for target in panel["targets"]:
                expr = target["expr"].replace("$job_name", JOB)
                result = query(expr)
                self.assertTrue(result, "%r: no data for %s" % (panel["title"], expr))
                for r in result:
                    self.assertEqual(r["metric"].get("job_name"), JOB, (panel["title"], r))
                print("%-32s %s" % (panel["title"], ", ".join(
                    "%s=%s" % (r["metric"].get("rank", "all"), r["value"][1]) for r in result)))
        with open(os.path.join(CHART, "templates", "prometheusrule.yaml")) as f:
            rules = f.read()
        training = rules[rules.index("name: ddp3d-training"):]
        # The windows are chart values ({{ $r.trainingStalled.window }}): their defaults.
        with open(os.path.join(CHART, "values.yaml")) as f:
            rule_values = yaml.safe_load(f)["prometheusRule"]

        def default(m):
            value = rule_values
            for key in m.group(1).split("."):
                value = value[key]
            return str(value)
        exprs = [re.sub(r"\{\{\s*\$r\.([\w.]+)\s*\}\}", default, e)
                 for e in re.findall(r"^\s*expr:\s*(.+)$", training, re.M)]
        self.assertFalse([e for e in exprs if "{{" in e], exprs)
        self.assertEqual(len(exprs), 2)
        for expr in exprs:
            self.assertEqual(query(expr), [], "alert fires on a healthy run: " + expr)

    def test_a_taken_port_is_an_error_naming_it(self):
        with socket.socket() as holder:
            holder.bind(("0.0.0.0", 0))
            holder.listen(1)
            port = holder.getsockname()[1]
            env = dict(os.environ, DDP3D_METRICS_PORT=str(port), OMP_NUM_THREADS="1")
            res = subprocess.run([BINARY, "train", CONFIG, "--work-dir",
                                  os.path.join(self.tmp, "work")],
                                 env=env, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("0.0.0.0:%d" % port, res.stderr + res.stdout)
        self.assertIn("DDP3D_METRICS_PORT=%d" % port, res.stderr + res.stdout)
        # Nothing trained: the error came before the work dir's first run.
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "work")))


if __name__ == "__main__":
    unittest.main()
