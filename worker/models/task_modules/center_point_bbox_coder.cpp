#include "worker/models/task_modules/center_point_bbox_coder.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "worker/models/task_modules/gaussian_heatmap.h"

namespace ddp3d::models {

CenterPointTargets center_point_targets(const at::Tensor& gt_boxes, const at::Tensor& gt_labels,
                                        int64_t num_classes, int64_t height, int64_t width,
                                        const CenterPointCoderOptions& options) {
  TORCH_CHECK(gt_boxes.dim() == 2 && gt_boxes.size(1) >= 7,
              "center_point_targets: gt_boxes must be [G, 7]");
  TORCH_CHECK(gt_labels.dim() == 1 && gt_labels.size(0) == gt_boxes.size(0),
              "center_point_targets: one label per box");
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  CenterPointTargets t;
  t.heatmap = at::zeros({num_classes, height, width}, f32);
  t.boxes = at::zeros({options.max_objs, 8}, f32);
  t.inds = at::zeros({options.max_objs}, at::kLong);
  t.mask = at::zeros({options.max_objs}, at::kByte);
  const at::Tensor boxes = gt_boxes.detach().to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor labels = gt_labels.detach().to(at::kCPU, at::kLong).contiguous();
  const auto b = boxes.accessor<double, 2>();
  const auto l = labels.accessor<int64_t, 1>();
  const double cell_x = options.voxel_size[0] * static_cast<double>(options.out_size_factor);
  const double cell_y = options.voxel_size[1] * static_cast<double>(options.out_size_factor);
  auto out = t.boxes.accessor<float, 2>();
  auto inds = t.inds.accessor<int64_t, 1>();
  auto mask = t.mask.accessor<uint8_t, 1>();
  int64_t written = 0;
  for (int64_t k = 0; k < boxes.size(0) && written < options.max_objs; ++k) {
    const int64_t cls = l[k];
    const double dx = b[k][3], dy = b[k][4], dz = b[k][5];
    if (cls < 0 || cls >= num_classes || !(dx > 0) || !(dy > 0) || !(dz > 0)) continue;
    const double cx = (b[k][0] - options.pc_range_min[0]) / cell_x;
    const double cy = (b[k][1] - options.pc_range_min[1]) / cell_y;
    if (!std::isfinite(cx) || !std::isfinite(cy)) continue;
    const auto x = static_cast<int64_t>(std::floor(cx));
    const auto y = static_cast<int64_t>(std::floor(cy));
    if (x < 0 || y < 0 || x >= width || y >= height) continue;
    // mmdet3d: radius from (length, width) = (dy, dx) in cells, at least min_radius.
    const double radius = gaussian_radius(dy / cell_y, dx / cell_x, options.gaussian_overlap);
    // Capped before the cast: a box far larger than any map must not overflow it.
    const int64_t r = std::max(options.min_radius, static_cast<int64_t>(std::min(radius, 1e9)));
    at::Tensor plane = t.heatmap[cls];
    draw_heatmap_gaussian(plane, x, y, r);
    inds[written] = y * width + x;
    mask[written] = 1;
    const double values[8] = {cx - static_cast<double>(x),
                              cy - static_cast<double>(y),
                              b[k][2] + dz / 2,
                              std::log(dx),
                              std::log(dy),
                              std::log(dz),
                              std::sin(b[k][6]),
                              std::cos(b[k][6])};
    for (int c = 0; c < 8; ++c) out[written][c] = static_cast<float>(values[c]);
    ++written;
  }
  return t;
}

std::vector<Detections> center_point_decode(const CenterPointMaps& maps,
                                            const CenterPointCoderOptions& options) {
  const at::Tensor& heat = maps.heatmap;
  TORCH_CHECK(heat.dim() == 4, "center_point_decode: heatmap must be [B, C, H, W]");
  const int64_t batch = heat.size(0);
  const int64_t classes = heat.size(1);
  const int64_t height = heat.size(2);
  const int64_t width = heat.size(3);
  const int64_t cells = height * width;
  const int64_t k = std::min(options.max_num, classes * cells);
  const double cell_x = options.voxel_size[0] * static_cast<double>(options.out_size_factor);
  const double cell_y = options.voxel_size[1] * static_cast<double>(options.out_size_factor);
  std::vector<Detections> out;
  for (int64_t s = 0; s < batch; ++s) {
    // Top k over every class and cell at once: the same boxes as mmdet3d's per-class top k
    // followed by a top k of those.
    const auto [scores, flat] = heat[s].reshape({-1}).topk(k);
    const at::Tensor labels = at::floor_divide(flat, cells);
    const at::Tensor ind = flat - labels * cells;
    const at::Tensor ys = at::floor_divide(ind, width).to(heat.scalar_type());
    const at::Tensor xs = (ind - at::floor_divide(ind, width) * width).to(heat.scalar_type());
    const auto at_peaks = [&](const at::Tensor& map) {  // [C', H, W] → [k, C']
      return map[s].reshape({map.size(1), -1}).index_select(1, ind).t();
    };
    const at::Tensor reg = at_peaks(maps.reg);
    const at::Tensor z_centre = at_peaks(maps.height).squeeze(1);
    const at::Tensor dim = at_peaks(maps.dim);
    const at::Tensor yaw =
        at::atan2(at_peaks(maps.rot_sin).squeeze(1), at_peaks(maps.rot_cos).squeeze(1));
    const at::Tensor x = (xs + reg.select(1, 0)) * cell_x + options.pc_range_min[0];
    const at::Tensor y = (ys + reg.select(1, 1)) * cell_y + options.pc_range_min[1];
    const at::Tensor z = z_centre - dim.select(1, 2) / 2;
    const at::Tensor boxes =
        at::stack({x, y, z, dim.select(1, 0), dim.select(1, 1), dim.select(1, 2), yaw}, 1);
    at::Tensor keep = scores > options.score_threshold;
    if (options.post_center_range.size() == 6) {
      const auto& r = options.post_center_range;
      keep = keep & (x >= r[0]) & (y >= r[1]) & (z_centre >= r[2]) & (x <= r[3]) & (y <= r[4]) &
             (z_centre <= r[5]);
    }
    out.push_back({boxes.index({keep}), scores.index({keep}), labels.index({keep})});
  }
  return out;
}

}  // namespace ddp3d::models
