// Rotated BEV NMS on a hand-made set.
#include "worker/ops/nms_rotated.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ddp3d::ops {
namespace {

std::vector<int64_t> to_vec(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

struct HandSet {
  at::Tensor boxes;
  at::Tensor scores;
};

// 0: A; 1: A shifted 0.2 m (IoU 0.905 with A); 2: C far away; 3: C nudged and turned, scored
// higher than C; 4: A turned by 90° (IoU 1/3 with A).
HandSet hand_set() {
  const at::Tensor boxes = at::tensor({0.0,  0.0, 4.0, 2.0, 0.0,  //
                                       0.2,  0.0, 4.0, 2.0, 0.0,  //
                                       10.0, 0.0, 4.0, 2.0, 0.0,  //
                                       10.0, 0.5, 4.0, 2.0, 0.1,  //
                                       0.0,  0.0, 4.0, 2.0, M_PI / 2},
                                      at::kDouble)
                               .view({5, 5});
  const at::Tensor scores = at::tensor({0.9, 0.8, 0.7, 0.95, 0.85}, at::kDouble);
  return {boxes, scores};
}

TEST(NmsRotatedBev, KeepsHighestOfEachOverlappingGroup) {
  const HandSet s = hand_set();
  EXPECT_EQ(to_vec(nms_rotated_bev(s.boxes, s.scores, 0.5)), (std::vector<int64_t>{3, 0, 4}));
  // A lower threshold also removes the crossed box (IoU 1/3 > 0.2).
  EXPECT_EQ(to_vec(nms_rotated_bev(s.boxes, s.scores, 0.2)), (std::vector<int64_t>{3, 0}));
  // A threshold above every IoU keeps everything, in score order.
  EXPECT_EQ(to_vec(nms_rotated_bev(s.boxes, s.scores, 0.99)),
            (std::vector<int64_t>{3, 0, 4, 1, 2}));
}

TEST(NmsRotatedBev, SuppressedBoxesDoNotSuppressOthers) {
  // B overlaps A and C; A suppresses B, so C (which overlaps only B) survives.
  const at::Tensor boxes =
      at::tensor({0.0, 0.0, 2.0, 2.0, 0.0, 1.2, 0.0, 2.0, 2.0, 0.0, 2.4, 0.0, 2.0, 2.0, 0.0},
                 at::kFloat)
          .view({3, 5});
  const at::Tensor scores = at::tensor({0.9, 0.8, 0.7}, at::kFloat);
  EXPECT_EQ(to_vec(nms_rotated_bev(boxes, scores, 0.2)), (std::vector<int64_t>{0, 2}));
}

TEST(NmsRotatedBev, EmptyAndMalformedInput) {
  EXPECT_EQ(nms_rotated_bev(at::zeros({0, 5}), at::zeros({0}), 0.5).numel(), 0);
  EXPECT_THROW(nms_rotated_bev(at::zeros({3, 7}), at::zeros({3}), 0.5), c10::Error);
  EXPECT_THROW(nms_rotated_bev(at::zeros({3, 5}), at::zeros({2}), 0.5), c10::Error);
}

}  // namespace
}  // namespace ddp3d::ops
