#include "worker/data/voxelization.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

namespace ddp3d::data {
namespace {

VoxelizationOptions small() {
  VoxelizationOptions o;
  o.point_cloud_range = {0, 0, 0, 4, 4, 4};
  o.voxel_size = {1, 1, 4};
  o.max_points_per_voxel = 2;
  o.max_voxels = 3;
  return o;
}

TEST(Voxelization, PillarGridOfTheKittiConfig) {
  VoxelizationOptions o;
  const auto g = o.grid_size();
  EXPECT_EQ(g[0], 432);
  EXPECT_EQ(g[1], 496);
  EXPECT_EQ(g[2], 1);
}

TEST(Voxelization, OrderCapsAndDroppedPoints) {
  // Cells (x, y): a=(0,0), b=(1,0), a, a (over max_points), c=(2,3), d=(3,3) (over max_voxels),
  // and one point outside the range.
  const at::Tensor points = at::tensor({0.5f, 0.5f, 1.f, 10.f,  //
                                        1.5f, 0.2f, 1.f, 11.f,  //
                                        0.1f, 0.9f, 2.f, 12.f,  //
                                        0.2f, 0.2f, 3.f, 13.f,  //
                                        2.5f, 3.5f, 1.f, 14.f,  //
                                        3.5f, 3.5f, 1.f, 15.f,  //
                                        5.0f, 1.0f, 1.f, 16.f})
                                .view({7, 4});
  const Voxels v = voxelize(points, small());
  ASSERT_EQ(v.voxels.size(0), 3);
  EXPECT_TRUE(at::equal(v.num_points, at::tensor({2, 1, 1}, at::kInt)));
  // coors are (z, y, x) in first-seen order.
  EXPECT_TRUE(at::equal(v.coors, at::tensor({0, 0, 0, 0, 0, 1, 0, 3, 2}, at::kInt).view({3, 3})));
  EXPECT_FLOAT_EQ(v.voxels[0][0][3].item<float>(), 10.f);
  EXPECT_FLOAT_EQ(v.voxels[0][1][3].item<float>(), 12.f);
  EXPECT_FLOAT_EQ(v.voxels[1][1].abs().sum().item<float>(), 0.f);  // zero padding
  EXPECT_FLOAT_EQ(v.voxels[2][0][3].item<float>(), 14.f);
}

TEST(Voxelization, RangeEdgesAndNonFiniteCoordinates) {
  // The range is [0, 4) per axis: 0 is inside, 4 and anything non-finite outside.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const at::Tensor points = at::tensor({0.f,    0.f, 0.f, 1.f, 4.f,   1.f, 1.f,  2.f,  //
                                        nan,    1.f, 1.f, 3.f, 1.f,   inf, 1.f,  4.f,  //
                                        -1e30f, 1.f, 1.f, 5.f, 1e30f, 1.f, -inf, 6.f,  //
                                        3.999f, 1.f, 1.f, 7.f})
                                .view({7, 4});
  const Voxels v = voxelize(points, small());
  ASSERT_EQ(v.voxels.size(0), 2);
  EXPECT_TRUE(at::equal(v.coors, at::tensor({0, 0, 0, 0, 1, 3}, at::kInt).view({2, 3})));
  EXPECT_TRUE(at::equal(v.num_points, at::tensor({1, 1}, at::kInt)));
  EXPECT_FLOAT_EQ(v.voxels[1][0][3].item<float>(), 7.f);
}

TEST(Voxelization, CollatePrefixesTheBatchIndex) {
  const at::Tensor a = at::tensor({0.5f, 0.5f, 1.f, 0.f}).view({1, 4});
  const at::Tensor b = at::tensor({1.5f, 2.5f, 1.f, 0.f, 0.5f, 0.5f, 1.f, 0.f}).view({2, 4});
  const Voxels batch = collate_voxels({voxelize(a, small()), voxelize(b, small())});
  ASSERT_EQ(batch.coors.size(0), 3);
  EXPECT_EQ(batch.coors.size(1), 4);
  EXPECT_TRUE(at::equal(batch.coors.select(1, 0), at::tensor({0, 1, 1}, at::kInt)));
  EXPECT_TRUE(at::equal(batch.coors[1], at::tensor({1, 0, 2, 1}, at::kInt)));
}

}  // namespace
}  // namespace ddp3d::data
