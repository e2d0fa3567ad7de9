#include "worker/data/transforms.h"

#include <ATen/ATen.h>

#include <cmath>
#include <numbers>

namespace ddp3d::data {
namespace {

at::Tensor wrap(const at::Tensor& a) {
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  return a - at::floor((a + std::numbers::pi) / kTwoPi) * kTwoPi;
}

}  // namespace

void points_range_filter(DetectionSample& s, const std::array<double, 6>& r) {
  const auto& p = s.points;
  const auto keep = (p.select(1, 0) >= r[0]) & (p.select(1, 1) >= r[1]) & (p.select(1, 2) >= r[2]) &
                    (p.select(1, 0) < r[3]) & (p.select(1, 1) < r[4]) & (p.select(1, 2) < r[5]);
  s.points = p.index({keep});
}

void object_range_filter(DetectionSample& s, const std::array<double, 6>& r) {
  const auto& b = s.gt_boxes;
  const auto keep = (b.select(1, 0) > r[0]) & (b.select(1, 1) > r[1]) & (b.select(1, 0) < r[3]) &
                    (b.select(1, 1) < r[4]);
  s.gt_boxes = b.index({keep}).clone();
  s.gt_labels = s.gt_labels.index({keep});
  if (s.gt_boxes.size(0) > 0) s.gt_boxes.select(1, 6).copy_(wrap(s.gt_boxes.select(1, 6)));
}

void object_name_filter(DetectionSample& s) {
  const auto keep = s.gt_labels >= 0;
  s.gt_boxes = s.gt_boxes.index({keep});
  s.gt_labels = s.gt_labels.index({keep});
}

void rotate_scale_translate(DetectionSample& s, double angle, double scale,
                            const std::array<double, 3>& t) {
  const double c = std::cos(angle), sn = std::sin(angle);
  // Row vectors times R^T: (x, y) -> (c x - s y, s x + c y).
  const at::Tensor rot_t = at::tensor({c, sn, -sn, c}, at::kFloat).view({2, 2});
  const at::Tensor shift = at::tensor({t[0], t[1], t[2]}, at::kFloat);
  s.points = s.points.clone();
  auto pxy = s.points.narrow(1, 0, 2);
  pxy.copy_(at::matmul(pxy, rot_t));
  auto pxyz = s.points.narrow(1, 0, 3);
  pxyz.mul_(scale).add_(shift);
  if (s.gt_boxes.size(0) == 0) return;
  s.gt_boxes = s.gt_boxes.clone();
  auto bxy = s.gt_boxes.narrow(1, 0, 2);
  bxy.copy_(at::matmul(bxy, rot_t));
  s.gt_boxes.narrow(1, 0, 6).mul_(scale);
  s.gt_boxes.narrow(1, 0, 3).add_(shift);
  auto yaw = s.gt_boxes.select(1, 6);
  yaw.copy_(wrap(yaw + angle));
}

void global_rot_scale_trans(DetectionSample& s, std::array<double, 2> rot,
                            std::array<double, 2> scale, double translation_std,
                            std::mt19937_64& rng) {
  const double angle = std::uniform_real_distribution<double>(rot[0], rot[1])(rng);
  const double factor = std::uniform_real_distribution<double>(scale[0], scale[1])(rng);
  std::array<double, 3> t{0, 0, 0};
  if (translation_std > 0) {
    std::normal_distribution<double> n(0.0, translation_std);
    t = {n(rng), n(rng), n(rng)};
  }
  rotate_scale_translate(s, angle, factor, t);
}

void flip_bev(DetectionSample& s) {
  s.points = s.points.clone();
  s.points.select(1, 1).neg_();
  if (s.gt_boxes.size(0) == 0) return;
  s.gt_boxes = s.gt_boxes.clone();
  s.gt_boxes.select(1, 1).neg_();
  s.gt_boxes.select(1, 6).neg_();
}

void random_flip_bev(DetectionSample& s, double probability, std::mt19937_64& rng) {
  if (std::uniform_real_distribution<double>(0, 1)(rng) < probability) flip_bev(s);
}

void point_shuffle(DetectionSample& s, std::mt19937_64& rng) {
  const auto n = s.points.size(0);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  s.points = s.points.index_select(0, at::tensor(order, at::kLong));
}

}  // namespace ddp3d::data
