#include "worker/engine/train_log.h"

#include <gtest/gtest.h>

namespace ddp3d::engine {
namespace {

TEST(TrainLog, IterLineHasMmengineShape) {
  IterRecord r;
  r.epoch = 3;
  r.iter_in_epoch = 50;
  r.iters_per_epoch = 500;
  r.global_iter = 1050;
  r.lr = 1e-3;
  r.eta_seconds = 62;
  r.time = 0.12341;
  r.data_time = 0.00123;
  r.losses = {{"loss", 0.56781}, {"loss_cls", 0.25}};
  EXPECT_EQ(format_iter_line(r),
            "Epoch(train) [3][ 50/500]  lr: 1.0000e-03  eta: 0:01:02  time: 0.1234  "
            "data_time: 0.0012  loss: 0.5678  loss_cls: 0.2500");
  EXPECT_EQ(format_iter_json(r),
            "{\"lr\": 0.001, \"momentum\": 0, \"data_time\": 0.00123, \"loss\": 0.56781, "
            "\"loss_cls\": 0.25, \"time\": 0.12341, \"epoch\": 3, \"iter\": 1050, \"step\": 1050}");
}

TEST(TrainLog, EtaLikePythonTimedelta) {
  EXPECT_EQ(format_eta(0), "0:00:00");
  EXPECT_EQ(format_eta(3661.7), "1:01:01");
  EXPECT_EQ(format_eta(86400 + 5), "1 day, 0:00:05");
  EXPECT_EQ(format_eta(3 * 86400), "3 days, 0:00:00");
}

TEST(TrainLog, MetricsRecords) {
  EXPECT_EQ(format_metrics_line("val", 2, 4, {{"mae", 0.5}, {"mse", 0.25}}),
            "Epoch(val) [2][4/4]    mae: 0.5000  mse: 0.2500");
  EXPECT_EQ(format_metrics_line("test", 0, 4, {{"mse", 0.25}}), "Epoch(test) [4/4]    mse: 0.2500");
  EXPECT_EQ(format_metrics_json(2, 64, {{"mse", 0.25}}),
            "{\"mse\": 0.25, \"epoch\": 2, \"step\": 64}");
}

}  // namespace
}  // namespace ddp3d::engine
