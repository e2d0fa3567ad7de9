// CenterPoint's heatmap targets against values worked out by hand.
#include "worker/models/task_modules/gaussian_heatmap.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "worker/models/task_modules/center_point_bbox_coder.h"

namespace ddp3d::models {
namespace {

TEST(GaussianRadius, TheSmallestRootOfTheThreeCases) {
  // 4 × 4 cells at overlap 0.5:
  //   r1 = (8 + sqrt(64 - 4·16·0.5/1.5)) / 2 = (8 + 6.5320) / 2 = 7.2660
  //   r2 = (16 + sqrt(256 - 16·8)) / 2 = (16 + 11.3137) / 2 = 13.6569
  //   r3 = (-8 + sqrt(64 + 4·2·8)) / 2 = (-8 + 11.3137) / 2 = 4(√2 - 1) = 1.65685
  EXPECT_NEAR(gaussian_radius(4, 4, 0.5), 4 * (std::sqrt(2.0) - 1), 1e-12);
  // 2 × 8 cells at overlap 0.1:
  //   r1 = (10 + sqrt(100 - 4·16·0.9/1.1)) / 2 = (10 + 6.8755) / 2 = 8.4377
  //   r2 = (20 + sqrt(400 - 16·14.4)) / 2 = (20 + 13.0200) / 2 = 16.5100
  //   r3: a = 0.4, b = -2, c = -14.4: (-2 + sqrt(4 + 23.04)) / 2 = (-2 + 5.2) / 2 = 1.6
  EXPECT_NEAR(gaussian_radius(2, 8, 0.1), 1.6, 1e-12);
  EXPECT_THROW(gaussian_radius(0, 4, 0.5), std::invalid_argument);
  EXPECT_THROW(gaussian_radius(4, 4, 1.0), std::invalid_argument);
  EXPECT_THROW(gaussian_radius(4, std::nan(""), 0.5), std::invalid_argument);
}

TEST(DrawHeatmapGaussian, RadiusOneIsAThreeByThreePeakWithSigmaOneHalf) {
  at::Tensor heatmap = at::zeros({5, 6});
  draw_heatmap_gaussian(heatmap, /*x=*/2, /*y=*/3, /*radius=*/1);
  // σ = 3/6: exp(-(dx² + dy²) / (2·0.25)) = exp(-2(dx² + dy²)).
  const auto h = heatmap.accessor<float, 2>();
  EXPECT_FLOAT_EQ(h[3][2], 1.0F);
  EXPECT_FLOAT_EQ(h[3][1], static_cast<float>(std::exp(-2.0)));
  EXPECT_FLOAT_EQ(h[2][2], static_cast<float>(std::exp(-2.0)));
  EXPECT_FLOAT_EQ(h[4][3], static_cast<float>(std::exp(-4.0)));
  EXPECT_FLOAT_EQ(heatmap.sum().item<float>(),
                  static_cast<float>(1 + 4 * std::exp(-2.0) + 4 * std::exp(-4.0)));
}

TEST(DrawHeatmapGaussian, ClipsAtTheEdgeAndKeepsTheLargerValue) {
  at::Tensor heatmap = at::zeros({3, 3});
  heatmap[0][1] = 0.5F;  // above the Gaussian's exp(-2) there: kept
  draw_heatmap_gaussian(heatmap, 0, 0, 1);
  const auto h = heatmap.accessor<float, 2>();
  EXPECT_FLOAT_EQ(h[0][0], 1.0F);
  EXPECT_FLOAT_EQ(h[0][1], 0.5F);
  EXPECT_FLOAT_EQ(h[1][0], static_cast<float>(std::exp(-2.0)));
  EXPECT_FLOAT_EQ(h[1][1], static_cast<float>(std::exp(-4.0)));
  EXPECT_FLOAT_EQ(h[2][2], 0.0F);  // outside the radius
  // A centre off the map draws nothing.
  at::Tensor empty = at::zeros({3, 3});
  draw_heatmap_gaussian(empty, 3, 0, 1);
  draw_heatmap_gaussian(empty, -1, 1, 1);
  EXPECT_EQ(empty.count_nonzero().item<int64_t>(), 0);
}

TEST(DrawHeatmapGaussian, AHugeRadiusCostsNoMoreThanTheMap) {
  // A radius of 2^62 cells: σ ≈ 1.5e18, so the map is 1 at the peak and ≈ 1 everywhere; the
  // Gaussian is evaluated over the 4 × 5 map only (a whole one would not fit in memory).
  at::Tensor heatmap = at::zeros({4, 5});
  draw_heatmap_gaussian(heatmap, 2, 1, std::int64_t{1} << 62);
  EXPECT_FLOAT_EQ(heatmap[1][2].item<float>(), 1.0F);
  EXPECT_FLOAT_EQ(heatmap.min().item<float>(), 1.0F);
  at::Tensor max_radius = at::zeros({2, 2});
  draw_heatmap_gaussian(max_radius, 1, 1, std::numeric_limits<std::int64_t>::max());
  EXPECT_TRUE(max_radius.isfinite().all().item<bool>());
  EXPECT_FLOAT_EQ(max_radius[1][1].item<float>(), 1.0F);
}

TEST(CenterPointTargets, ABoxFarLargerThanTheMapIsOnePeakNotAnOverflow) {
  CenterPointCoderOptions o;
  o.pc_range_min = {0.0, 0.0};
  o.voxel_size = {1.0, 1.0};
  o.out_size_factor = 1;
  o.min_radius = 1;
  const at::Tensor boxes =
      at::tensor({2.5, 1.5, 0.0, 1e30, 1e30, 1.0, 0.0}, at::kDouble).reshape({1, 7});
  const CenterPointTargets t = center_point_targets(boxes, at::zeros({1}, at::kLong), 1, 4, 4, o);
  EXPECT_FLOAT_EQ(t.heatmap[0][1][2].item<float>(), 1.0F);
  EXPECT_TRUE(t.heatmap.isfinite().all().item<bool>());
  EXPECT_EQ(t.mask.sum().item<int64_t>(), 1);
}

}  // namespace
}  // namespace ddp3d::models
