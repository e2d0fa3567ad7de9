// The CUDA kernels against the CPU implementation on random box sets (needs a GPU).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include "worker/ops/box_iou.h"
#include "worker/ops/nms_rotated.h"

namespace ddp3d::ops {
namespace {

at::Tensor random_bev(int64_t n, at::Generator& gen) {
  const at::Tensor centre = at::rand({n, 2}, gen, at::kFloat) * 20 - 10;
  const at::Tensor size = at::rand({n, 2}, gen, at::kFloat) * 4 + 0.5;
  const at::Tensor yaw = at::rand({n, 1}, gen, at::kFloat) * 6.3 - 3.15;
  return at::cat({centre, size, yaw}, 1);
}

class OpsCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(at::globalContext().hasCUDA()) << "built with CUDA but no GPU is visible";
  }
};

TEST_F(OpsCuda, PairwiseMeasuresMatchCpu) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const at::Tensor a = random_bev(300, gen);
  const at::Tensor b = random_bev(200, gen);
  const at::Tensor iou_cpu = box_iou_rotated_bev(a, b);
  const at::Tensor iou_gpu = box_iou_rotated_bev(a.cuda(), b.cuda()).cpu();
  EXPECT_TRUE(at::allclose(iou_gpu, iou_cpu, 1e-4, 1e-5)) << (iou_gpu - iou_cpu).abs().max();
  EXPECT_GT(iou_cpu.gt(0).sum().item<int64_t>(), 100);  // the sets do overlap
  const at::Tensor inter_cpu = box_intersection_rotated_bev(a, b);
  const at::Tensor inter_gpu = box_intersection_rotated_bev(a.cuda(), b.cuda()).cpu();
  EXPECT_TRUE(at::allclose(inter_gpu, inter_cpu, 1e-4, 1e-4));

  const at::Tensor z = at::rand({300, 2}, gen, at::kFloat);
  const at::Tensor a3 = at::cat({a.narrow(1, 0, 2), z.narrow(1, 0, 1), a.narrow(1, 2, 2),
                                 z.narrow(1, 1, 1) + 1, a.narrow(1, 4, 1)},
                                1);
  const at::Tensor b3 = a3.narrow(0, 0, 200).flip({0}).contiguous();
  const at::Tensor iou3_cpu = box_iou_3d(a3, b3);
  const at::Tensor iou3_gpu = box_iou_3d(a3.cuda(), b3.cuda()).cpu();
  EXPECT_TRUE(at::allclose(iou3_gpu, iou3_cpu, 1e-4, 1e-5));
}

TEST_F(OpsCuda, NmsMatchesCpu) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  // More than 64 boxes so the bit mask spans several words and blocks.
  const at::Tensor boxes = random_bev(500, gen);
  const at::Tensor scores = at::rand({500}, gen, at::kFloat);
  for (const double thr : {0.01, 0.1, 0.5}) {
    const at::Tensor keep_cpu = nms_rotated_bev(boxes, scores, thr);
    const at::Tensor keep_gpu = nms_rotated_bev(boxes.cuda(), scores.cuda(), thr).cpu();
    EXPECT_TRUE(at::equal(keep_cpu, keep_gpu)) << "threshold " << thr;
  }
}

}  // namespace
}  // namespace ddp3d::ops
