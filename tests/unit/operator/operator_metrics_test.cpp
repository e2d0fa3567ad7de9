// The operator's families as a scrape shows them: labelled counters, the scrape-time gauges
// read from the cache and the queue, that the whole body passes `promtool check metrics`, and
// that no label is one a scrape attaches to every target (it would become exported_<name>).
#include "operator/runtime/operator_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/metrics/process_collector.h"
#include "tests/unit/common/exposition_labels.h"
#include "tests/unit/common/promtool.h"

namespace ddp3d::op {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST(OperatorMetrics, ScrapeShowsCountersAndTheCacheGauges) {
  metrics::Collection exposed;
  exposed.add(std::make_shared<metrics::ProcessCollector>());
  OperatorMetrics m(exposed);
  m.reconcile("success").Increment(3);
  m.action("CreatePod").Increment(2);
  m.gang_restarts("ml", "pp").Increment();
  m.status_conflicts_total.Increment();
  m.is_leader.Set(1);
  m.reconcile_duration_seconds.Observe(0.003);
  double depth = 4;
  m.set_sources(
      [] {
        return std::map<std::string, double>{{"Running", 2}, {"Failed", 1}};
      },
      [&] { return depth; });
  std::string text = exposed.text();
  EXPECT_TRUE(has_line(text, R"(ddp3d_operator_reconcile_total{result="success"} 3)")) << text;
  EXPECT_TRUE(has_line(text, R"(ddp3d_operator_actions_total{action="CreatePod"} 2)")) << text;
  EXPECT_TRUE(has_line(
      text, R"(ddp3d_operator_gang_restarts_total{trainingjob="pp",trainingjob_namespace="ml"} 1)"))
      << text;
  EXPECT_TRUE(has_line(text, "ddp3d_operator_status_conflicts_total 1")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_operator_is_leader 1")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_operator_reconcile_duration_seconds_count 1")) << text;
  EXPECT_TRUE(has_line(text, R"(ddp3d_operator_trainingjobs{phase="Running"} 2)")) << text;
  EXPECT_TRUE(has_line(text, R"(ddp3d_operator_trainingjobs{phase="Pending"} 0)")) << text;
  EXPECT_TRUE(has_line(text, "ddp3d_operator_workqueue_depth 4")) << text;
  // Read at scrape time: no drift from the source.
  depth = 0;
  EXPECT_TRUE(has_line(exposed.text(), "ddp3d_operator_workqueue_depth 0"));

  const std::string promtool = metrics::test::find_promtool();
  ASSERT_FALSE(promtool.empty()) << "promtool not found on PATH (Debian package 'prometheus')";
  const auto run = metrics::test::promtool_check(promtool, text);
  EXPECT_EQ(run.exit_code, 0) << run.output << "\non:\n" << text;
  EXPECT_TRUE(run.output.empty()) << run.output;
}

// Every family with a sample and every label the operator sets, checked against the target
// labels of a scrape (job, instance, namespace, pod, container, service, endpoint, node, "__*").
// A TrainingJob's namespace and name must not be `namespace`/`job`: the DDP3DGangRestartLoop
// alert and the dashboard would group by the operator's scrape target instead.
TEST(OperatorMetrics, NoLabelIsOneAScrapeAttachesToItsTarget) {
  metrics::Collection exposed;
  exposed.add(std::make_shared<metrics::ProcessCollector>());
  OperatorMetrics m(exposed);
  m.reconcile("success").Increment();
  m.reconcile("error").Increment();
  m.action("DeletePod").Increment();
  m.gang_restarts("team-a", "pointpillars").Increment(2);
  m.job_failed("BackoffLimitExceeded").Increment();
  m.status_conflicts_total.Increment();
  m.reconcile_duration_seconds.Observe(0.01);
  m.set_sources([] { return std::map<std::string, double>{{"Running", 1}}; }, [] { return 1.0; });
  const std::string text = exposed.text();
  // Every registered family is in the text, so each one's labels were checked: a new family
  // must be given a sample here.
  for (const auto& family : exposed.registry().Collect()) {
    EXPECT_NE(text.find("\n# TYPE " + family.name + " "), std::string::npos)
        << family.name << " has no sample in this test, so its labels are not checked:\n"
        << text;
  }
  const auto labels = metrics::test::label_names(text);
  EXPECT_EQ(labels.at("ddp3d_operator_gang_restarts_total"),
            (std::set<std::string>{"trainingjob", "trainingjob_namespace"}));
  EXPECT_EQ(labels.at("ddp3d_operator_trainingjobs"), (std::set<std::string>{"phase"}));
  const auto collisions = metrics::test::scrape_label_collisions(text);
  EXPECT_TRUE(collisions.empty()) << ::testing::PrintToString(collisions) << " in:\n" << text;
}

}  // namespace
}  // namespace ddp3d::op
