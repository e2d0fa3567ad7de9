// The full-size mmdet3d PointPillars configs: parameter counts and one training iteration of
// the car model on synthetic pillars (496 × 432 canvas, as in training).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>

#include <chrono>
#include <cmath>
#include <iostream>

#include "worker/models/detectors/voxelnet.h"

namespace ddp3d::models {
namespace {

// Expected counts, derived from the architecture (weights + BN γ/β; convs without bias except
// the head's 1×1 convs):
//   PillarFeatureNet  Linear 10→64 (640) + BN1d 64 (128)                               =       768
//   SECOND  stage 1   (64·64·9 + 128) × (1 + 3)                                        =   147,968
//           stage 2   (64·128·9 + 256) + (128·128·9 + 256) × 5                         =   812,544
//           stage 3   (128·256·9 + 512) + (256·256·9 + 512) × 5                        = 3,247,104
//   SECONDFPN         64·128·1 + 128·128·4 + 256·128·16 (deconvs) + 3 × BN 128 (768)   =   598,784
//   Anchor3DHead car  A = 2 anchors/cell: 384·2+2 + 384·14+14 + 384·4+4                =     7,700
//   Anchor3DHead 3cls A = 6, C = 3:       384·18+18 + 384·42+42 + 384·12+12            =    27,720
// Car total 4,814,868 and 3-class total 4,834,888: mmdet3d's "4.8M" PointPillars.
constexpr int64_t kPfn = 768;
constexpr int64_t kBackbone = 147968 + 812544 + 3247104;
constexpr int64_t kNeck = 598784;
constexpr int64_t kHeadCar = 7700;
constexpr int64_t kHead3Class = 27720;

TEST(PointPillarsFull, ParameterCountsMatchMmdet3d) {
  VoxelNet car(pointpillars_kitti_car_options());
  EXPECT_EQ(count_parameters(*car->voxel_encoder()), kPfn);
  EXPECT_EQ(count_parameters(*car->backbone()), kBackbone);
  EXPECT_EQ(count_parameters(*car->neck()), kNeck);
  EXPECT_EQ(count_parameters(*car->bbox_head()), kHeadCar);
  EXPECT_EQ(count_parameters(*car), 4814868);
  VoxelNet three(pointpillars_kitti_3class_options());
  EXPECT_EQ(count_parameters(*three->bbox_head()), kHead3Class);
  EXPECT_EQ(count_parameters(*three), 4834888);
  std::cout << "[params] car " << count_parameters(*car) << ", 3-class " << count_parameters(*three)
            << "\n";
}

struct SyntheticBatch {
  at::Tensor voxels, num_points, coors;
  std::vector<at::Tensor> gt_boxes, gt_labels;
};

// Random pillars over the whole canvas (unique cells) with 1-32 points each, and three cars.
SyntheticBatch synthetic_batch(const PointPillarsOptions& o, int64_t num_pillars) {
  at::manual_seed(2024);
  const auto& vs = o.voxel_encoder.voxel_size;
  const auto& pcr = o.voxel_encoder.point_cloud_range;
  const int64_t ny = o.middle_encoder.output_shape[0];
  const int64_t nx = o.middle_encoder.output_shape[1];
  const int64_t p = 32;
  const at::Tensor cells = at::randperm(ny * nx, at::kLong).narrow(0, 0, num_pillars);
  const at::Tensor y = cells.div(nx, "floor");
  const at::Tensor x = cells.remainder(nx);
  SyntheticBatch b;
  b.coors = at::stack({at::zeros_like(x), at::zeros_like(x), y, x}, 1).to(at::kInt);
  b.num_points = at::randint(1, p + 1, {num_pillars}, at::kInt);
  const at::Tensor u = at::rand({num_pillars, p, 4});
  const at::Tensor px = (x.to(at::kFloat).unsqueeze(1) + u.select(2, 0)) * vs[0] + pcr[0];
  const at::Tensor py = (y.to(at::kFloat).unsqueeze(1) + u.select(2, 1)) * vs[1] + pcr[1];
  const at::Tensor pz = u.select(2, 2) * (pcr[5] - pcr[2]) + pcr[2];
  const at::Tensor mask = (at::arange(p).unsqueeze(0) < b.num_points.unsqueeze(1)).to(at::kFloat);
  b.voxels = at::stack({px, py, pz, u.select(2, 3)}, 2) * mask.unsqueeze(2);
  b.gt_boxes = {at::tensor({10.0f, 5.0f,  -1.6f, 3.9f, 1.6f, 1.56f, 0.3f,  //
                            25.0f, -8.0f, -1.7f, 4.2f, 1.7f, 1.5f,  1.8f,  //
                            40.0f, 12.0f, -1.5f, 3.6f, 1.5f, 1.6f,  -2.5f})
                    .view({3, 7})};
  b.gt_labels = {at::zeros({3}, at::kLong)};
  return b;
}

TEST(PointPillarsFull, CarModelTrainsOneIterationAndPredicts) {
  const PointPillarsOptions options = pointpillars_kitti_car_options();
  at::manual_seed(0);  // reproducible initial weights, whichever tests ran before in the process
  VoxelNet model(options);
  model->train();
  const SyntheticBatch batch = synthetic_batch(options, 6000);
  // mmdet3d's optimizer for this config: AdamW(lr=1e-3, betas=(0.95, 0.99), weight_decay=0.01).
  torch::optim::AdamW optimizer(
      model->parameters(), torch::optim::AdamWOptions(1e-3).betas({0.95, 0.99}).weight_decay(0.01));
  std::vector<at::Tensor> before;
  for (const auto& p : model->parameters()) before.push_back(p.detach().clone());

  const auto t0 = std::chrono::steady_clock::now();
  const LossMap losses = model->forward_train(batch.voxels, batch.num_points, batch.coors,
                                              batch.gt_boxes, batch.gt_labels);
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_EQ(losses.size(), 3u);
  for (const auto& [name, value] : losses) {
    EXPECT_TRUE(std::isfinite(value.item<double>())) << name;
    EXPECT_GT(value.item<double>(), 0.0) << name;
    std::cout << "[loss] " << name << " = " << value.item<double>() << "\n";
  }
  optimizer.zero_grad();
  total_loss(losses).backward();
  const auto t2 = std::chrono::steady_clock::now();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_TRUE(at::isfinite(p.value().grad()).all().item<bool>()) << p.key();
  }
  optimizer.step();
  size_t changed = 0;
  const auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    if (!at::equal(params[i].detach(), before[i])) ++changed;
  }
  EXPECT_EQ(changed, params.size()) << "every parameter tensor should move after one AdamW step";

  model->eval();
  const auto t3 = std::chrono::steady_clock::now();
  const std::vector<Detections> dets =
      model->predict(batch.voxels, batch.num_points, batch.coors, 1);
  const auto t4 = std::chrono::steady_clock::now();
  ASSERT_EQ(dets.size(), 1u);
  EXPECT_LE(dets[0].boxes.size(0), options.test_cfg.max_num);
  EXPECT_EQ(dets[0].boxes.size(1), 7);
  EXPECT_TRUE(at::isfinite(dets[0].boxes).all().item<bool>());
  using ms = std::chrono::milliseconds;
  std::cout << "[time] forward_train " << std::chrono::duration_cast<ms>(t1 - t0).count()
            << " ms, backward " << std::chrono::duration_cast<ms>(t2 - t1).count()
            << " ms, predict " << std::chrono::duration_cast<ms>(t4 - t3).count() << " ms, "
            << dets[0].boxes.size(0) << " boxes\n";
}

}  // namespace
}  // namespace ddp3d::models
