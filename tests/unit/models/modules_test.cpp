// PillarFeatureNet, PointPillarsScatter, SECOND and SECONDFPN on small tensors.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/conv.h>

#include "worker/models/backbones/second.h"
#include "worker/models/middle_encoders/pointpillars_scatter.h"
#include "worker/models/necks/second_fpn.h"
#include "worker/models/voxel_encoders/pillar_feature_net.h"

namespace ddp3d::models {
namespace {

// Three pillars with 1, 2 and 4 points (of 4 slots) at cells (x, y) = (0, 0), (3, 1), (5, 2).
struct Pillars {
  at::Tensor voxels;
  at::Tensor num_points;
  at::Tensor coors;
};

Pillars small_pillars(const PillarFeatureNetOptions& o) {
  at::manual_seed(5);
  const at::Tensor num_points = at::tensor({1, 2, 4}, at::kInt);
  const at::Tensor coors = at::tensor({0, 0, 0, 0, 0, 0, 1, 3, 1, 0, 2, 5}, at::kInt).view({3, 4});
  at::Tensor voxels = at::zeros({3, 4, 4});
  for (int64_t m = 0; m < 3; ++m) {
    const double x0 = o.point_cloud_range[0] + coors[m][3].item<int>() * o.voxel_size[0];
    const double y0 = o.point_cloud_range[1] + coors[m][2].item<int>() * o.voxel_size[1];
    for (int64_t p = 0; p < num_points[m].item<int>(); ++p) {
      voxels[m][p][0] = x0 + at::rand({1}).item<double>() * o.voxel_size[0];
      voxels[m][p][1] = y0 + at::rand({1}).item<double>() * o.voxel_size[1];
      voxels[m][p][2] = at::rand({1}).item<double>() * 2 - 2;
      voxels[m][p][3] = at::rand({1}).item<double>();
    }
  }
  return {voxels, num_points, coors};
}

TEST(PillarFeatureNet, DecoratesPointsWithClusterAndCentreOffsets) {
  PillarFeatureNetOptions o;
  o.legacy = false;
  PillarFeatureNet pfn(o);
  const Pillars p = small_pillars(o);
  const at::Tensor f = pfn->decorate(p.voxels, p.num_points, p.coors);
  ASSERT_EQ(f.sizes(), (std::vector<int64_t>{3, 4, 10}));
  EXPECT_EQ(pfn->decorated_channels(), 10);
  // Raw point, offset from the pillar's point mean, offset from the pillar centre.
  const at::Tensor pts = p.voxels[1].narrow(0, 0, 2);
  EXPECT_TRUE(at::allclose(f[1].narrow(0, 0, 2).narrow(1, 0, 4), pts));
  EXPECT_TRUE(at::allclose(f[1].narrow(0, 0, 2).narrow(1, 4, 3),
                           pts.narrow(1, 0, 3) - pts.narrow(1, 0, 3).mean(0, true), 1e-5, 1e-6));
  // Pillar 1 is cell (x 3, y 1, z 0): centre (3.5·0.16, -39.68 + 1.5·0.16, -3 + 2).
  const at::Tensor centre = at::tensor({3.5 * 0.16, -39.68 + 1.5 * 0.16, -1.0}, at::kFloat);
  EXPECT_TRUE(
      at::allclose(f[1].narrow(0, 0, 2).narrow(1, 7, 3), pts.narrow(1, 0, 3) - centre, 1e-5, 1e-5));
  // Padding slots are all zero.
  EXPECT_EQ(f[0].narrow(0, 1, 3).abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(f[1].narrow(0, 2, 2).abs().sum().item<float>(), 0.0f);
}

TEST(PillarFeatureNet, LegacyModeReplacesRawXyzByCentreOffsets) {
  PillarFeatureNetOptions o;  // mmdet3d default: legacy = true
  PillarFeatureNet pfn(o);
  const Pillars p = small_pillars(o);
  const at::Tensor f = pfn->decorate(p.voxels, p.num_points, p.coors);
  EXPECT_TRUE(at::allclose(f.narrow(2, 0, 3), f.narrow(2, 7, 3)));
  EXPECT_TRUE(at::allclose(f.narrow(2, 3, 1), p.voxels.narrow(2, 3, 1)));
}

TEST(PillarFeatureNet, OutputShapeAndPaddingDoesNotLeak) {
  PillarFeatureNetOptions o;
  PillarFeatureNet pfn(o);
  pfn->train();
  const Pillars p = small_pillars(o);
  const at::Tensor out = pfn->forward(p.voxels, p.num_points, p.coors);
  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{3, 64}));
  // Garbage in the padding slots must not change the result.
  at::Tensor dirty = p.voxels.clone();
  dirty[0].narrow(0, 1, 3).fill_(1000.0);
  dirty[1].narrow(0, 2, 2).fill_(-77.0);
  EXPECT_TRUE(at::allclose(pfn->forward(dirty, p.num_points, p.coors), out, 1e-5, 1e-6));
  // Max pooling: each channel's output is the max over the pillar's (decorated) points.
  EXPECT_TRUE((out >= 0).all().item<bool>());
}

TEST(PillarFeatureNet, PaddingMask) {
  const at::Tensor mask = padding_mask(at::tensor({1, 3, 0}, at::kInt), 4);
  EXPECT_TRUE(at::equal(
      mask, at::tensor({1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0}, at::kInt).to(at::kBool).view({3, 4})));
}

TEST(PillarFeatureNet, RejectsMismatchedInputs) {
  PillarFeatureNet pfn(PillarFeatureNetOptions{});
  EXPECT_THROW(pfn->forward(at::zeros({3, 4, 5}), at::ones({3}), at::zeros({3, 4})), c10::Error);
  EXPECT_THROW(pfn->forward(at::zeros({3, 4, 4}), at::ones({2}), at::zeros({3, 4})), c10::Error);
}

TEST(PointPillarsScatter, PlacesPillarsOnTheirCellsPerSample) {
  PointPillarsScatter scatter(PointPillarsScatterOptions{3, {4, 5}});
  const at::Tensor feats = at::arange(9, at::kFloat).view({3, 3}).set_requires_grad(true);
  // (batch, z, y, x)
  const at::Tensor coors = at::tensor({0, 0, 1, 2, 1, 0, 3, 4, 1, 0, 0, 0}, at::kInt).view({3, 4});
  const at::Tensor canvas = scatter->forward(feats, coors, 2);
  ASSERT_EQ(canvas.sizes(), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_TRUE(at::equal(canvas.select(0, 0).select(1, 1).select(1, 2), feats[0].detach()));
  EXPECT_TRUE(at::equal(canvas.select(0, 1).select(1, 3).select(1, 4), feats[1].detach()));
  EXPECT_TRUE(at::equal(canvas.select(0, 1).select(1, 0).select(1, 0), feats[2].detach()));
  EXPECT_EQ(canvas.sum().item<float>(), feats.sum().item<float>());  // nothing else is set
  canvas.sum().backward();
  EXPECT_TRUE(at::equal(feats.grad(), at::ones({3, 3})));
  const at::Tensor outside = at::tensor({0, 0, 4, 0}, at::kInt).view({1, 4});
  EXPECT_THROW(scatter->forward(feats.narrow(0, 0, 1), outside, 1), c10::Error);
}

TEST(SECONDAndFPN, OutputShapes) {
  SECOND backbone(SECONDOptions{});
  SECONDFPN neck(SECONDFPNOptions{});
  const at::Tensor x = at::randn({2, 64, 32, 24});
  const std::vector<at::Tensor> stages = backbone->forward(x);
  ASSERT_EQ(stages.size(), 3u);
  EXPECT_EQ(stages[0].sizes(), (std::vector<int64_t>{2, 64, 16, 12}));
  EXPECT_EQ(stages[1].sizes(), (std::vector<int64_t>{2, 128, 8, 6}));
  EXPECT_EQ(stages[2].sizes(), (std::vector<int64_t>{2, 256, 4, 3}));
  EXPECT_EQ(neck->forward(stages).sizes(), (std::vector<int64_t>{2, 384, 16, 12}));
  // Conv + BN + ReLU: 4 / 6 / 6 conv layers with BN, no conv bias.
  int64_t convs = 0;
  for (const auto& m : backbone->modules(false)) {
    if (m->as<torch::nn::Conv2dImpl>() != nullptr) ++convs;
  }
  EXPECT_EQ(convs, 4 + 6 + 6);
}

}  // namespace
}  // namespace ddp3d::models
