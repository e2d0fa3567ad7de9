// CenterPoint's targets and decoding on small maps, against values worked out by hand.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "worker/models/task_modules/center_point_bbox_coder.h"

namespace ddp3d::models {
namespace {

// Heatmap cells of 1 m: voxels of 0.5 m, 2 voxels per cell; the map starts at (0, -4).
CenterPointCoderOptions one_metre_cells() {
  CenterPointCoderOptions o;
  o.pc_range_min = {0.0, -4.0};
  o.voxel_size = {0.5, 0.5};
  o.out_size_factor = 2;
  o.gaussian_overlap = 0.1;
  o.min_radius = 1;
  o.max_objs = 4;
  o.max_num = 3;
  o.score_threshold = 0.1;
  return o;
}

TEST(CenterPointTargets, OneBoxIsAPeakOnItsClassAndItsCodeAtItsCell) {
  // A: centre (2.25, -1.5) → cell (x 2, y 2) with offsets (0.25, 0.5); 4 × 2 m, so in cells
  // (length 2, width 4) at overlap 0.1: r3 = (-1.2 + sqrt(1.44 + 11.52)) / 2 = 1.2 is the
  // smallest root → radius 1. B lies beyond x = 8 m, C has no length: both left out.
  const at::Tensor boxes = at::tensor({2.25, -1.5, -1.0, 4.0, 2.0, 1.5, 0.5,  //
                                       9.0,  0.0,  -1.0, 4.0, 2.0, 1.5, 0.0,  //
                                       1.0,  1.0,  -1.0, 0.0, 2.0, 1.5, 0.0},
                                      at::kDouble)
                               .reshape({3, 7});
  const at::Tensor labels = at::tensor({1, 0, 0}, at::kLong);
  const CenterPointTargets t = center_point_targets(boxes, labels, 2, 8, 8, one_metre_cells());
  EXPECT_EQ(t.heatmap.sizes(), (std::vector<int64_t>{2, 8, 8}));
  EXPECT_EQ(t.heatmap[0].count_nonzero().item<int64_t>(), 0);
  const auto h = t.heatmap.accessor<float, 3>();
  EXPECT_FLOAT_EQ(h[1][2][2], 1.0F);
  EXPECT_FLOAT_EQ(h[1][2][3], static_cast<float>(std::exp(-2.0)));
  EXPECT_FLOAT_EQ(h[1][3][3], static_cast<float>(std::exp(-4.0)));
  EXPECT_EQ(t.heatmap[1].count_nonzero().item<int64_t>(), 9);  // the 3 × 3 of radius 1
  EXPECT_EQ(t.mask.sum().item<int64_t>(), 1);
  EXPECT_EQ(t.mask[0].item<int64_t>(), 1);
  EXPECT_EQ(t.inds[0].item<int64_t>(), 2 * 8 + 2);
  // offsets, centre z (bottom -1 + 1.5 / 2), log sizes, sin/cos of the yaw
  const at::Tensor want = at::tensor(
      {0.25, 0.5, -0.25, std::log(4.0), std::log(2.0), std::log(1.5), std::sin(0.5), std::cos(0.5)},
      at::kFloat);
  EXPECT_TRUE(at::allclose(t.boxes[0], want, 1e-6, 1e-6)) << t.boxes[0];
  EXPECT_EQ(t.boxes.slice(0, 1).count_nonzero().item<int64_t>(), 0);
}

TEST(CenterPointDecode, PeaksBecomeBoxesAboveTheThresholdAndInsideTheRange) {
  const int64_t H = 4, W = 5;
  CenterPointMaps m;
  m.heatmap = at::zeros({1, 2, H, W});
  m.heatmap[0][1][3][2] = 0.9F;   // class 1 at cell (x 2, y 3)
  m.heatmap[0][0][0][4] = 0.3F;   // class 0 at cell (x 4, y 0)
  m.heatmap[0][0][1][1] = 0.05F;  // under the threshold
  m.reg = at::zeros({1, 2, H, W});
  m.reg[0][0][3][2] = 0.25F;
  m.reg[0][1][3][2] = 0.75F;
  m.height = at::zeros({1, 1, H, W});
  m.height[0][0][3][2] = 0.5F;
  m.dim = at::ones({1, 3, H, W});
  m.dim[0][0][3][2] = 4.0F;
  m.dim[0][1][3][2] = 2.0F;
  m.dim[0][2][3][2] = 1.5F;
  m.rot_sin = at::zeros({1, 1, H, W});
  m.rot_cos = at::ones({1, 1, H, W});
  m.rot_sin[0][0][3][2] = static_cast<float>(std::sin(0.3));
  m.rot_cos[0][0][3][2] = static_cast<float>(std::cos(0.3));

  const std::vector<Detections> all = center_point_decode(m, one_metre_cells());
  ASSERT_EQ(all.size(), 1U);
  // x = (2 + 0.25) · 1 m + 0, y = (3 + 0.75) · 1 m - 4, z = 0.5 - 1.5 / 2 (bottom);
  // the second peak: (4, -4), centre z 0, unit sizes, so bottom z -0.5.
  const at::Tensor want = at::tensor({2.25, -0.25, -0.25, 4.0, 2.0, 1.5, 0.3,  //
                                      4.0, -4.0, -0.5, 1.0, 1.0, 1.0, 0.0},
                                     at::kFloat)
                              .reshape({2, 7});
  EXPECT_TRUE(at::allclose(all[0].boxes, want, 1e-6, 1e-6)) << all[0].boxes;
  EXPECT_TRUE(at::allclose(all[0].scores, at::tensor({0.9F, 0.3F})));
  EXPECT_TRUE(at::equal(all[0].labels, at::tensor({1, 0}, at::kLong)));

  // post_center_range [x 0..3, y -4..0, z -1..1] drops the second (x = 4).
  CenterPointCoderOptions ranged = one_metre_cells();
  ranged.post_center_range = {0, -4, -1, 3, 0, 1};
  const std::vector<Detections> in_range = center_point_decode(m, ranged);
  ASSERT_EQ(in_range[0].boxes.size(0), 1);
  EXPECT_TRUE(at::allclose(in_range[0].boxes[0], want[0], 1e-6, 1e-6));
}

}  // namespace
}  // namespace ddp3d::models
