#include "operator/controller/observed.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"

namespace ddp3d::op::controller {
namespace {

using testing::parse;

TEST(ObservePod, ReadsLabelsPhaseAndExitCode) {
  const auto p = observe_pod(parse(R"({
    "metadata": {"name": "pp-node-1", "uid": "u1",
      "labels": {"ddp3d.io/node-rank": "1", "ddp3d.io/attempt": "2"}},
    "status": {"phase": "Failed", "containerStatuses": [
      {"name": "sidecar", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
      {"name": "worker", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}]}})"));
  EXPECT_EQ(p.name, "pp-node-1");
  EXPECT_EQ(p.uid, "u1");
  EXPECT_EQ(p.rank, 1);
  EXPECT_EQ(p.attempt, 2);
  EXPECT_EQ(p.phase, "Failed");
  EXPECT_EQ(p.exit_code, 137);
  EXPECT_EQ(p.reason, "OOMKilled");
  EXPECT_FALSE(p.deleting);
}

TEST(ObservePod, EvictedPodHasReasonButNoCode) {
  const auto p = observe_pod(parse(R"({
    "metadata": {"name": "x", "deletionTimestamp": "2026-01-01T00:00:00Z",
      "labels": {"ddp3d.io/node-rank": "abc"}},
    "status": {"phase": "Failed", "reason": "Evicted"}})"));
  EXPECT_EQ(p.rank, -1);
  EXPECT_EQ(p.attempt, -1);
  EXPECT_EQ(p.reason, "Evicted");
  EXPECT_FALSE(p.exit_code);
  EXPECT_TRUE(p.deleting);
}

TEST(ObserveService, Name) {
  EXPECT_EQ(observe_object(parse(R"({"metadata": {"name": "pp", "uid": "s"}})")).name, "pp");
}

}  // namespace
}  // namespace ddp3d::op::controller
