#include "worker/detection/object_augment.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "worker/data/point_cloud_file.h"
#include "worker/ops/box_iou.h"

namespace ddp3d::detection {
namespace {

data::LidarBox box_at(const at::Tensor& boxes, std::int64_t i) {
  const auto a = boxes.accessor<float, 2>();
  return {a[i][0], a[i][1], a[i][2], a[i][3], a[i][4], a[i][5], a[i][6]};
}

// BEV (x, y, l, w, yaw) rows of LiDAR boxes [K, 7].
at::Tensor bev(const at::Tensor& boxes) {
  return at::stack({boxes.select(1, 0), boxes.select(1, 1), boxes.select(1, 3), boxes.select(1, 4),
                    boxes.select(1, 6)},
                   1);
}

at::Tensor row(const data::LidarBox& b) {
  return at::tensor({static_cast<float>(b.x), static_cast<float>(b.y), static_cast<float>(b.z),
                     static_cast<float>(b.l), static_cast<float>(b.w), static_cast<float>(b.h),
                     static_cast<float>(b.yaw)})
      .view({1, 7});
}

// Whether `candidate` [1, 7] overlaps (in BEV) any row of `others` [K, 7].
bool collides(const at::Tensor& candidate, const at::Tensor& others) {
  if (others.size(0) == 0) return false;
  return ops::box_intersection_rotated_bev(bev(candidate), bev(others)).max().item<float>() > 0;
}

}  // namespace

ObjectSampler::ObjectSampler(const ObjectSampleOptions& options,
                             const std::vector<std::string>& class_names, std::int64_t use_dim)
    : root_(options.data_root), use_dim_(use_dim) {
  for (const auto& e : data::read_gt_database(options.info_path)) {
    const auto it = std::find(class_names.begin(), class_names.end(), e.type);
    if (it == class_names.end()) continue;
    const auto& drop = options.filter_by_difficulty;
    if (std::find(drop.begin(), drop.end(), e.difficulty) != drop.end()) continue;
    const auto min = options.filter_by_min_points.find(e.type);
    if (min != options.filter_by_min_points.end() && e.num_points < min->second) continue;
    pool_[it - class_names.begin()].push_back(e);
  }
  for (const auto& [name, count] : options.sample_groups) {
    const auto it = std::find(class_names.begin(), class_names.end(), name);
    if (it == class_names.end() || count <= 0) continue;
    const std::int64_t label = it - class_names.begin();
    if (pool_[label].empty()) {
      throw std::runtime_error(options.info_path + ": no " + name +
                               " objects left after the filters (sample_groups asks for " +
                               std::to_string(count) + ")");
    }
    groups_.emplace_back(label, count);
  }
}

std::size_t ObjectSampler::pool_size(std::int64_t label) const {
  const auto it = pool_.find(label);
  return it == pool_.end() ? 0 : it->second.size();
}

void ObjectSampler::apply(data::DetectionSample& s, std::mt19937_64& rng) const {
  at::Tensor boxes = s.gt_boxes.to(at::kFloat).contiguous();
  std::vector<const data::GtDatabaseEntry*> pasted;
  std::vector<std::int64_t> pasted_labels;
  for (const auto& [label, wanted] : groups_) {
    const auto have = (s.gt_labels == label).sum().item<std::int64_t>();
    const std::int64_t need = wanted - have;
    if (need <= 0) continue;
    // `need` distinct candidates: a partial Fisher-Yates shuffle of the pool's indices.
    const auto& pool = pool_.at(label);
    std::vector<std::size_t> order(pool.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto n = std::min<std::size_t>(static_cast<std::size_t>(need), order.size());
    for (std::size_t i = 0; i < n; ++i) {
      std::swap(order[i],
                order[std::uniform_int_distribution<std::size_t>(i, order.size() - 1)(rng)]);
      const data::GtDatabaseEntry& e = pool[order[i]];
      const at::Tensor candidate = row(e.box);
      if (collides(candidate, boxes)) continue;
      boxes = at::cat({boxes, candidate});
      pasted.push_back(&e);
      pasted_labels.push_back(label);
    }
  }
  if (pasted.empty()) return;

  at::Tensor keep = at::ones({s.points.size(0)}, at::kBool);
  std::vector<at::Tensor> points;
  for (const data::GtDatabaseEntry* e : pasted) {
    keep &= data::points_in_box(s.points, e->box).logical_not();
    const std::string path = (std::filesystem::path(root_) / e->path).string();
    at::Tensor p = data::read_velodyne(path).narrow(1, 0, use_dim_).clone();
    p.select(1, 0).add_(e->box.x);
    p.select(1, 1).add_(e->box.y);
    p.select(1, 2).add_(e->box.z);
    points.push_back(p);
  }
  points.insert(points.begin(), s.points.index({keep}));
  s.points = at::cat(points);
  s.gt_boxes = boxes;
  s.gt_labels = at::cat({s.gt_labels, at::tensor(pasted_labels, at::kLong)});
}

void object_noise(data::DetectionSample& s, const ObjectNoiseOptions& o, std::mt19937_64& rng) {
  at::Tensor boxes = s.gt_boxes.to(at::kFloat).contiguous().clone();
  const std::int64_t k = boxes.size(0);
  if (k == 0) return;
  // Points are moved with the box that held them before any box moved.
  std::vector<at::Tensor> inside(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i)
    inside[static_cast<std::size_t>(i)] = data::points_in_box(s.points, box_at(boxes, i));
  at::Tensor points = s.points.clone();
  for (std::int64_t i = 0; i < k; ++i) {
    const data::LidarBox b = box_at(boxes, i);
    const at::Tensor others = at::cat({boxes.narrow(0, 0, i), boxes.narrow(0, i + 1, k - i - 1)});
    for (int t = 0; t < o.num_try; ++t) {
      const double dx = std::normal_distribution<double>(0, o.translation_std[0])(rng);
      const double dy = std::normal_distribution<double>(0, o.translation_std[1])(rng);
      const double dz = std::normal_distribution<double>(0, o.translation_std[2])(rng);
      const double rot =
          std::uniform_real_distribution<double>(o.rot_range[0], o.rot_range[1])(rng);
      data::LidarBox moved = b;
      moved.x += dx;
      moved.y += dy;
      moved.z += dz;
      moved.yaw += rot;
      if (collides(row(moved), others)) continue;
      // Points of the box: turn by `rot` about the box's vertical axis, then shift.
      const at::Tensor mask = inside[static_cast<std::size_t>(i)];
      at::Tensor p = points.index({mask});
      const at::Tensor px = p.select(1, 0) - b.x, py = p.select(1, 1) - b.y;
      const double c = std::cos(rot), sn = std::sin(rot);
      p.select(1, 0).copy_(px * c - py * sn + moved.x);
      p.select(1, 1).copy_(px * sn + py * c + moved.y);
      p.select(1, 2).add_(dz);
      points.index_put_({mask}, p);
      boxes[i].copy_(row(moved)[0]);
      break;
    }
  }
  s.points = points;
  s.gt_boxes = boxes;
}

}  // namespace ddp3d::detection
