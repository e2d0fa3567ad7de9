// CenterHead and GaussianFocalLoss on small maps, against values worked out by hand.
#include "worker/models/dense_heads/center_head.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "worker/models/losses/gaussian_focal_loss.h"

namespace ddp3d::models {
namespace {

TEST(GaussianFocalLoss, PeaksAndTheCellsAroundThemAsMmdetWeighsThem) {
  // A peak at p 0.5: -log(0.5)·0.5² = 0.1732868. A cell at target 0.5, p 0.2:
  // -log(0.8)·0.2²·0.5⁴ = 0.000557859. A background cell at p 0.1: -log(0.9)·0.1² = 0.00105361.
  const at::Tensor pred = at::tensor({0.5, 0.2, 0.1}, at::kDouble);
  const at::Tensor target = at::tensor({1.0, 0.5, 0.0}, at::kDouble);
  const GaussianFocalLoss loss(GaussianFocalLossOptions{});
  EXPECT_NEAR(loss(pred, target, 1.0).item<double>(), 0.1748985, 1e-6);
  // avg_factor divides, loss_weight scales.
  const GaussianFocalLoss weighted(GaussianFocalLossOptions{2.0, 4.0, 3.0});
  EXPECT_NEAR(weighted(pred, target, 2.0).item<double>(), 1.5 * 0.1748985, 1e-6);
}

// A 4 × 4 map of 1 m cells from (0, 0): voxels of 1 m, out_size_factor 1; 4 channels
// everywhere, one class.
CenterHead tiny_head(CenterPointTestCfg test_cfg = {}) {
  CenterHeadOptions o;
  o.num_classes = 1;
  o.in_channels = 4;
  o.share_conv_channel = 4;
  o.head_conv = 4;
  o.bbox_coder.pc_range = {0.0, 0.0};
  o.bbox_coder.voxel_size = {1.0, 1.0};
  o.bbox_coder.out_size_factor = 1;
  o.bbox_coder.max_num = 16;
  o.bbox_coder.score_threshold = 0.1;
  CenterPointTrainCfg train;
  train.min_radius = 1;
  train.max_objs = 4;
  return CenterHead(o, train, test_cfg, std::array<int64_t, 2>{4, 4});
}

// The raw maps of one sample, all zero: every code predicted 0, every heatmap logit `logit`.
CenterHeadOutputs zero_outputs(double logit) {
  CenterHeadOutputs out;
  out.heatmap = at::full({1, 1, 4, 4}, logit, at::kFloat);
  out.reg = at::zeros({1, 2, 4, 4});
  out.height = at::zeros({1, 1, 4, 4});
  out.dim = at::zeros({1, 3, 4, 4});
  out.rot = at::zeros({1, 2, 4, 4});
  return out;
}

// Box at (1.5, 2.25), bottom z -1, 2 × 1 × 1 m, yaw 0: cell (x 1, y 2), offsets (0.5, 0.25),
// centre z -0.5, log sizes (0.6931, 0, 0), sin 0, cos 1.
at::Tensor one_box() {
  return at::tensor({1.5, 2.25, -1.0, 2.0, 1.0, 1.0, 0.0}, at::kFloat).reshape({1, 7});
}

TEST(CenterHead, L1LossOfTheCodesAtThePeakCell) {
  CenterHead head = tiny_head();
  const std::vector<at::Tensor> boxes{one_box()};
  const std::vector<at::Tensor> labels{at::zeros({1}, at::kLong)};
  // Predicting 0 everywhere: Σ|code| = 0.5 + 0.25 + 0.5 + log 2 + 1 = 2.9431472 over 1 box
  // (+1e-4), × 0.25.
  const LossMap zero = head->loss(zero_outputs(0.0), boxes, labels);
  EXPECT_NEAR(zero.at("loss_bbox").item<double>(), 0.25 * 2.9431472 / 1.0001, 1e-5);

  // The exact codes at cell (y 2, x 1) and nonsense everywhere else: no regression loss. A
  // head that read another cell, or the channels in another order, would pay for it.
  CenterHeadOutputs exact = zero_outputs(0.0);
  exact.reg.fill_(7.0);
  exact.height.fill_(-3.0);
  exact.dim.fill_(2.0);
  exact.rot.fill_(5.0);
  const float codes[8] = {0.5F, 0.25F, -0.5F, std::log(2.0F), 0.0F, 0.0F, 0.0F, 1.0F};
  exact.reg[0][0][2][1] = codes[0];
  exact.reg[0][1][2][1] = codes[1];
  exact.height[0][0][2][1] = codes[2];
  for (int c = 0; c < 3; ++c) exact.dim[0][c][2][1] = codes[3 + c];
  exact.rot[0][0][2][1] = codes[6];
  exact.rot[0][1][2][1] = codes[7];
  EXPECT_NEAR(head->loss(exact, boxes, labels).at("loss_bbox").item<double>(), 0.0, 1e-6);
}

TEST(CenterHead, HeatmapLossIsTheFocalLossOverThePeakCount) {
  CenterHead head = tiny_head();
  const std::vector<at::Tensor> boxes{one_box()};
  const std::vector<at::Tensor> labels{at::zeros({1}, at::kLong)};
  // Logit 0 everywhere: p = 0.5. The peak costs log 2 · 0.25; every other cell
  // log 2 · 0.25 · (1 - target)⁴. One peak divides.
  const LossMap l = head->loss(zero_outputs(0.0), boxes, labels);
  const at::Tensor target =
      center_point_targets(boxes[0], labels[0], 1, 4, 4, head->coder_options()).heatmap;
  EXPECT_EQ(target.eq(1).sum().item<int64_t>(), 1);
  const double background = (1 - target).pow(4).sum().item<double>();  // the peak adds 0
  const double want = std::log(2.0) * 0.25 * (1 + background);
  EXPECT_NEAR(l.at("loss_heatmap").item<double>(), want, 1e-5);
  // No boxes: nothing regressed, and the heatmap loss is the background's over 1.
  const LossMap none =
      head->loss(zero_outputs(0.0), {at::zeros({0, 7})}, {at::zeros({0}, at::kLong)});
  EXPECT_NEAR(none.at("loss_bbox").item<double>(), 0.0, 1e-9);
  EXPECT_NEAR(none.at("loss_heatmap").item<double>(), std::log(2.0) * 0.25 * 16, 1e-5);
}

TEST(CenterHead, PredictDecodesPeaksAndSuppressesOverlaps) {
  CenterPointTestCfg test_cfg;
  test_cfg.nms_thr = 0.2;
  CenterHead head = tiny_head(test_cfg);
  CenterHeadOutputs out = zero_outputs(-10.0);  // background: p ≈ 4.5e-5, below 0.1
  // Peak A at (y 2, x 1), logit 2 (p 0.8808): the box of one_box(). Peak B next to it at
  // (y 2, x 2), logit 1 (p 0.7311), offset -0.4 → centre x 1.6: it overlaps A and goes.
  // Peak C at (y 0, x 3), logit 0 (p 0.5), yaw π/2 from (sin 1, cos 0): far, it stays.
  out.heatmap[0][0][2][1] = 2.0;
  out.heatmap[0][0][2][2] = 1.0;
  out.heatmap[0][0][0][3] = 0.0;
  out.reg[0][0][2][1] = 0.5;
  out.reg[0][1][2][1] = 0.25;
  out.height[0][0][2][1] = -0.5;
  out.dim[0][0][2][1] = std::log(2.0);
  out.rot[0][1][2][1] = 1.0;
  out.reg[0][0][2][2] = -0.4;
  out.reg[0][1][2][2] = 0.25;
  out.rot[0][1][2][2] = 1.0;
  out.rot[0][0][0][3] = 1.0;
  const std::vector<Detections> dets = head->predict(out);
  ASSERT_EQ(dets.size(), 1U);
  const Detections& d = dets[0];
  ASSERT_EQ(d.scores.size(0), 2);
  EXPECT_NEAR(d.scores[0].item<double>(), 1 / (1 + std::exp(-2.0)), 1e-6);
  EXPECT_NEAR(d.scores[1].item<double>(), 0.5, 1e-6);
  // A: (1.5, 2.25, bottom z -1, 2, 1, 1, 0).
  const at::Tensor want_a = at::tensor({1.5, 2.25, -1.0, 2.0, 1.0, 1.0, 0.0}, at::kFloat);
  EXPECT_TRUE(at::allclose(d.boxes[0], want_a, 1e-5, 1e-5)) << d.boxes[0];
  // C: cell centre offsets 0 → (3, 0), centre z 0 → bottom -0.5, sizes 1, yaw π/2.
  const at::Tensor want_c =
      at::tensor({3.0, 0.0, -0.5, 1.0, 1.0, 1.0, static_cast<float>(M_PI / 2)}, at::kFloat);
  EXPECT_TRUE(at::allclose(d.boxes[1], want_c, 1e-5, 1e-5)) << d.boxes[1];
  EXPECT_EQ(d.labels.sum().item<int64_t>(), 0);

  // post_max_size keeps the best only; a loose nms_thr keeps B as well.
  test_cfg.post_max_size = 1;
  EXPECT_EQ(tiny_head(test_cfg)->predict(out)[0].scores.size(0), 1);
  test_cfg.post_max_size = 83;
  test_cfg.nms_thr = 0.99;
  EXPECT_EQ(tiny_head(test_cfg)->predict(out)[0].scores.size(0), 3);
}

TEST(CenterHead, ModuleShapesAndInitialHeatmapBias) {
  CenterHead head = tiny_head();
  const CenterHeadOutputs out = head->forward(at::randn({2, 4, 4, 4}));
  EXPECT_EQ(out.heatmap.sizes(), (std::vector<int64_t>{2, 1, 4, 4}));
  EXPECT_EQ(out.reg.size(1), 2);
  EXPECT_EQ(out.height.size(1), 1);
  EXPECT_EQ(out.dim.size(1), 3);
  EXPECT_EQ(out.rot.size(1), 2);
  const auto params = head->named_parameters();
  EXPECT_NEAR(params["heatmap.3.bias"].item<double>(), -2.19, 1e-6);
  EXPECT_TRUE(params.contains("shared_conv.0.weight"));
}

TEST(CenterHead, AMapThatIsNotTheGridOverTheFactorIsAnErrorNamingTheKey) {
  CenterHead head = tiny_head();
  CenterHeadOutputs out = zero_outputs(0.0);
  out.heatmap = at::zeros({1, 1, 2, 2});
  try {
    head->predict(out);
    FAIL() << "a 2 x 2 map for a 4 x 4 grid at factor 1 was accepted";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.bbox_head.bbox_coder.out_size_factor"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ddp3d::models
