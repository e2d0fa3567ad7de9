"""The chart's dashboards against Grafana's own dashboard types: dashboard_types/ (Go) decodes
them with the Grafana Foundation SDK's generated types, strictly, with every panel and
data-query plugin registered. The real dashboards must pass; copies with one defect each (a
misspelt option, a mistyped field, a panel type Grafana lacks, a query that is not Prometheus,
a field Grafana requires left out) must fail naming the field. Live queries are checked
elsewhere (promtool in chart_test.py, Prometheus on the test cluster)."""

import copy
import glob
import json
import os
import subprocess
import tempfile
import unittest

SOURCE_DIR = os.environ.get(
    "DDP3D_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
CHECKER = os.path.join(SOURCE_DIR, "tests", "integration", "chart", "dashboard_types")
DASHBOARDS = sorted(glob.glob(os.path.join(SOURCE_DIR, "charts", "ddp3d", "dashboards", "*.json")))


def check(*paths):
    # -mod=readonly: go.sum is committed; a missing sum fails instead of editing the tree.
    return subprocess.run(["go", "run", "-mod=readonly", ".", *paths], cwd=CHECKER,
                          capture_output=True, text=True, timeout=900)


class DashboardTypesTest(unittest.TestCase):
    def test_chart_dashboards_decode_strictly(self):
        self.assertEqual([os.path.basename(p) for p in DASHBOARDS], ["operator.json", "training.json"])
        res = check(*DASHBOARDS)
        self.assertEqual(res.returncode, 0, res.stderr)
        for path in DASHBOARDS:
            self.assertRegex(res.stdout, rf"{os.path.basename(path)}: \"ddp3d / \w+\", [1-9]\d* panels, "
                                         rf"[1-9]\d* Prometheus queries")
        print(res.stdout, end="")

    def test_defects_fail_naming_the_field(self):
        with open(os.path.join(SOURCE_DIR, "charts", "ddp3d", "dashboards", "training.json")) as f:
            good = json.load(f)

        def misspelt_option(d):
            d["panels"][1]["options"]["legend"]["placment"] = "bottom"

        def mistyped_ref(d):
            d["panels"][0]["targets"][0]["refId"] = 3

        def unknown_panel(d):
            d["panels"][2]["type"] = "timeseriez"

        def not_prometheus(d):
            d["panels"][0]["targets"][0] = {"refId": "A", "rawSql": "SELECT 1"}

        def required_missing(d):
            del d["panels"][0]["options"]["tooltip"]

        cases = [(misspelt_option, "panels[1].options.legend.VizLegendOptions: unexpected field 'placment'"),
                 (mistyped_ref, "panels[0].targets[0].refId: json: cannot unmarshal number"),
                 (unknown_panel, 'no Grafana panel plugin "timeseriez"'),
                 (not_prometheus, "targets[0]: not a Prometheus query"),
                 (required_missing, "panels[0].options.tooltip: required field is missing")]
        with tempfile.TemporaryDirectory(prefix="ddp3d-dashboards-") as tmp:
            for mutate, message in cases:
                with self.subTest(defect=mutate.__name__):
                    bad = copy.deepcopy(good)
                    mutate(bad)
                    path = os.path.join(tmp, mutate.__name__ + ".json")
                    with open(path, "w") as f:
                        json.dump(bad, f)
                    res = check(path)
                    self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
                    self.assertIn(path, res.stderr)
                    self.assertIn(message, res.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
