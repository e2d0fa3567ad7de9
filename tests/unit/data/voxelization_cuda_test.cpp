// The CUDA voxelization kernel against the CPU loop (needs a GPU): every output tensor must be
// identical, bit for bit, on random and adversarial clouds.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <limits>

#include "worker/data/voxelization.h"

namespace ddp3d::data {
namespace {

class VoxelizationCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(at::globalContext().hasCUDA()) << "built with CUDA but no GPU is visible";
  }
};

// Voxelizes `points` (CPU) on both devices and checks the GPU result equals the CPU one.
Voxels expect_same_on_gpu(const at::Tensor& points, const VoxelizationOptions& o) {
  const Voxels cpu = voxelize(points, o);
  const Voxels gpu = voxelize(points.cuda(), o);
  EXPECT_TRUE(gpu.voxels.is_cuda());
  EXPECT_TRUE(gpu.coors.is_cuda());
  EXPECT_TRUE(gpu.num_points.is_cuda());
  EXPECT_EQ(gpu.voxels.sizes(), cpu.voxels.sizes());
  EXPECT_EQ(gpu.coors.scalar_type(), at::kInt);
  EXPECT_EQ(gpu.num_points.scalar_type(), at::kInt);
  EXPECT_TRUE(at::equal(gpu.coors.cpu(), cpu.coors)) << "coors differ";
  EXPECT_TRUE(at::equal(gpu.num_points.cpu(), cpu.num_points)) << "num_points differ";
  EXPECT_TRUE(at::equal(gpu.voxels.cpu(), cpu.voxels)) << "voxel contents differ";
  return cpu;
}

// x, y, z, r uniform over a box somewhat larger than the KITTI pillar range, so some points
// fall outside on every side.
at::Tensor kitti_like_cloud(int64_t n, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor u = at::rand({n, 4}, gen, at::kFloat);
  const at::Tensor lo = at::tensor({-5.f, -45.f, -4.f, 0.f});
  const at::Tensor span = at::tensor({80.f, 90.f, 6.f, 1.f});
  return u * span + lo;
}

VoxelizationOptions tiny_grid(int max_points, int max_voxels) {
  VoxelizationOptions o;
  o.point_cloud_range = {0, 0, 0, 4, 4, 4};
  o.voxel_size = {1, 1, 1};
  o.max_points_per_voxel = max_points;
  o.max_voxels = max_voxels;
  return o;
}

TEST_F(VoxelizationCuda, RandomKittiCloudsMatchCpu) {
  const VoxelizationOptions train;  // the KITTI pillar config: 432 x 496 x 1, 32 points, 16000
  for (const uint64_t seed : {1u, 2u, 3u}) {
    const Voxels v = expect_same_on_gpu(kitti_like_cloud(30000, seed), train);
    // Enough to exercise many blocks of the kernels, without hitting the caps.
    EXPECT_GT(v.voxels.size(0), 10000) << "seed " << seed;
    EXPECT_LT(v.voxels.size(0), train.max_voxels);
  }
}

TEST_F(VoxelizationCuda, DenseCloudMatchesCpuWithFullVoxelsAndTheMaxVoxelsCut) {
  // 120k points over 214k pillars: many pillars fill up (32 points) only on a narrow strip,
  // and the 16000-voxel cap cuts the rest.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  at::Tensor cloud = kitti_like_cloud(120000, 7);
  // Concentrate a third of the points in a 2 m x 2 m patch: about 150 pillars, all full.
  const at::Tensor patch = at::rand({40000, 2}, gen, at::kFloat) * 2 + at::tensor({10.f, 0.f});
  cloud.narrow(0, 0, 40000).narrow(1, 0, 2).copy_(patch);
  cloud = cloud.index_select(0, at::randperm(120000, gen, at::kLong));
  const Voxels v = expect_same_on_gpu(cloud, VoxelizationOptions{});
  EXPECT_EQ(v.voxels.size(0), 16000);
  EXPECT_GT(v.num_points.eq(32).sum().item<int64_t>(), 100);
}

TEST_F(VoxelizationCuda, FullVoxelsKeepTheirFirstPointsInPointOrder) {
  // 3000 points in 3 cells of a 4 x 4 x 4 grid, interleaved at random: each voxel keeps the
  // first 5 of its points, in order.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  const at::Tensor cell = at::randint(0, 3, {3000, 1}, gen, at::kLong).to(at::kFloat);
  const at::Tensor xyz =
      at::cat({cell, cell, cell}, 1) + at::rand({3000, 3}, gen, at::kFloat) * 0.9;
  const at::Tensor id = at::arange(3000, at::kFloat).unsqueeze(1);
  const Voxels v = expect_same_on_gpu(at::cat({xyz, id}, 1), tiny_grid(5, 100));
  ASSERT_EQ(v.voxels.size(0), 3);
  EXPECT_TRUE(at::equal(v.num_points, at::full({3}, 5, at::kInt)));
  // Point ids rise within every voxel (point order kept).
  const at::Tensor ids = v.voxels.select(2, 3);
  EXPECT_TRUE(ids.narrow(1, 1, 4).gt(ids.narrow(1, 0, 4)).all().item<bool>());
}

TEST_F(VoxelizationCuda, MaxVoxelsCutDropsWholeCellsOpenedLate) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(13);
  const at::Tensor xyz = at::rand({5000, 3}, gen, at::kFloat) * 4;  // all 64 cells
  const at::Tensor feat = at::rand({5000, 2}, gen, at::kFloat);
  const at::Tensor points = at::cat({xyz, feat}, 1);  // C = 5
  for (const int max_voxels : {0, 1, 17, 63, 64, 1000}) {
    const Voxels v = expect_same_on_gpu(points, tiny_grid(200, max_voxels));
    EXPECT_EQ(v.voxels.size(0), std::min(max_voxels, 64)) << "max_voxels " << max_voxels;
  }
}

TEST_F(VoxelizationCuda, PointsOutsideTheRangeAndNonFiniteCoordinatesAreDropped) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Edges: the range is [0, 4) per axis, so 4.0 is outside and 0.0 inside.
  const at::Tensor points =
      at::tensor({0.f,    0.f, 0.f, 1.f, 4.f,    1.f, 1.f, 2.f, -1e-6f, 1.f,  1.f,   3.f, nan, 1.f,
                  1.f,    4.f, 1.f, inf, 1.f,    5.f, 1.f, 1.f, -inf,   6.f,  1e30f, 1.f, 1.f, 7.f,
                  -1e30f, 1.f, 1.f, 8.f, 3.999f, 1.f, 1.f, 9.f, 0.5f,   0.5f, 0.5f,  10.f})
          .view({10, 4});
  const Voxels v = expect_same_on_gpu(points, tiny_grid(4, 10));
  // Only rows 0 and 9 (cell (0,0,0)) and row 8 (cell x=3, y=1, z=1) are inside.
  ASSERT_EQ(v.voxels.size(0), 2);
  EXPECT_TRUE(at::equal(v.num_points, at::tensor({2, 1}, at::kInt)));
  EXPECT_TRUE(at::equal(v.coors, at::tensor({0, 0, 0, 1, 1, 3}, at::kInt).view({2, 3})));
  EXPECT_FLOAT_EQ(v.voxels[0][1][3].item<float>(), 10.f);
}

TEST_F(VoxelizationCuda, EmptyAndAllOutsideClouds) {
  const VoxelizationOptions o = tiny_grid(4, 10);
  const Voxels empty = expect_same_on_gpu(at::zeros({0, 4}), o);
  EXPECT_EQ(empty.voxels.size(0), 0);
  const Voxels outside = expect_same_on_gpu(at::full({50, 4}, 9.f), o);
  EXPECT_EQ(outside.voxels.size(0), 0);
}

TEST_F(VoxelizationCuda, DoubleAndNonContiguousInputsAreConverted) {
  const at::Tensor wide = kitti_like_cloud(8000, 17).to(at::kDouble).repeat({1, 2});  // [N, 8]
  const at::Tensor strided = wide.narrow(1, 0, 5);  // non-contiguous, C = 5
  ASSERT_FALSE(strided.is_contiguous());
  const Voxels v = expect_same_on_gpu(strided, VoxelizationOptions{});
  EXPECT_EQ(v.voxels.size(2), 5);
  EXPECT_EQ(v.voxels.scalar_type(), at::kFloat);
}

TEST_F(VoxelizationCuda, CollateWorksOnGpuVoxels) {
  const VoxelizationOptions o;
  const at::Tensor a = kitti_like_cloud(3000, 19);
  const at::Tensor b = kitti_like_cloud(2000, 23);
  const Voxels cpu = collate_voxels({voxelize(a, o), voxelize(b, o)});
  const Voxels gpu = collate_voxels({voxelize(a.cuda(), o), voxelize(b.cuda(), o)});
  EXPECT_TRUE(gpu.coors.is_cuda());
  EXPECT_TRUE(at::equal(gpu.coors.cpu(), cpu.coors));
  EXPECT_TRUE(at::equal(gpu.voxels.cpu(), cpu.voxels));
  EXPECT_TRUE(at::equal(gpu.num_points.cpu(), cpu.num_points));
}

}  // namespace
}  // namespace ddp3d::data
