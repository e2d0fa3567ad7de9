#include "operator/controller/event_object.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"

namespace ddp3d::op::controller {
namespace {

TEST(EventObject, RefersToTheJob) {
  const auto j = testing::job("pp", 2, 8);
  const auto ev =
      event_object(j.meta, "Warning", "NodeFailed", "node 1 failed", 1796033609123456789, "op-a");
  EXPECT_EQ(ev.at("metadata").at("name").as_string(), "pp.18eccb0d3c776715");
  EXPECT_EQ(ev.at("metadata").at("namespace").as_string(), "ml");
  const auto& io = ev.at("involvedObject");
  EXPECT_EQ(io.at("kind").as_string(), "TrainingJob");
  EXPECT_EQ(io.at("apiVersion").as_string(), "ddp3d.io/v1alpha1");
  EXPECT_EQ(io.at("uid").as_string(), "uid-1");
  EXPECT_EQ(ev.at("type").as_string(), "Warning");
  EXPECT_EQ(ev.at("reason").as_string(), "NodeFailed");
  EXPECT_EQ(ev.at("reportingInstance").as_string(), "op-a");
  EXPECT_EQ(ev.at("firstTimestamp").as_string(), "2026-11-30T10:13:29Z");
}

TEST(EventObject, ARepeatPatchesCountAndLastTimestamp) {
  const auto patch = event_repeat_patch(3, 1796033609123456789);
  EXPECT_EQ(patch.at("count").as_integer(), 3);
  EXPECT_EQ(patch.at("lastTimestamp").as_string(), "2026-11-30T10:13:29Z");
  EXPECT_EQ(patch.size(), 2u) << "firstTimestamp, name and message stay";
  EXPECT_EQ(event_message(std::string(5000, 'x')).size(), 1000u);
}

}  // namespace
}  // namespace ddp3d::op::controller
