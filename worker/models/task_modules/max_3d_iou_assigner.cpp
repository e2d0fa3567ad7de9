#include "worker/models/task_modules/max_3d_iou_assigner.h"

#include <ATen/ATen.h>

#include "worker/ops/box_iou.h"

namespace ddp3d::models {

AssignResult Max3DIoUAssigner::assign(const at::Tensor& anchors, const at::Tensor& gt_boxes) const {
  TORCH_CHECK(anchors.dim() == 2 && anchors.size(1) >= 7,
              "Max3DIoUAssigner: anchors must be [A, 7], got ", anchors.sizes());
  TORCH_CHECK(gt_boxes.dim() == 2 && (gt_boxes.size(0) == 0 || gt_boxes.size(1) >= 7),
              "Max3DIoUAssigner: gt boxes must be [G, 7], got ", gt_boxes.sizes());
  if (gt_boxes.size(0) == 0) {
    return {at::zeros({anchors.size(0)}, anchors.options().dtype(at::kLong)),
            at::zeros({anchors.size(0)}, anchors.options())};
  }
  return assign_wrt_overlaps(ops::box_iou_nearest_bev(gt_boxes.to(anchors.dtype()), anchors));
}

AssignResult Max3DIoUAssigner::assign_wrt_overlaps(const at::Tensor& overlaps) const {
  const int64_t num_gts = overlaps.size(0);
  const int64_t num_anchors = overlaps.size(1);
  const auto long_opts = overlaps.options().dtype(at::kLong);
  if (num_gts == 0 || num_anchors == 0) {
    return {at::zeros({num_anchors}, long_opts), at::zeros({num_anchors}, overlaps.options())};
  }
  at::Tensor assigned = at::full({num_anchors}, -1, long_opts);
  auto [max_overlaps, argmax] = overlaps.max(0);                    // per anchor
  const at::Tensor gt_max_overlaps = std::get<0>(overlaps.max(1));  // per gt

  assigned.masked_fill_((max_overlaps >= 0) & (max_overlaps < options_.neg_iou_thr), 0);
  const at::Tensor pos = max_overlaps >= options_.pos_iou_thr;
  assigned = at::where(pos, argmax + 1, assigned);

  if (options_.match_low_quality) {
    // Every gt also claims its best anchor(s), if good enough: no gt is left unmatched just
    // because no anchor clears pos_iou_thr. Later gts win ties, as in mmdet's loop.
    for (int64_t i = 0; i < num_gts; ++i) {
      const double best = gt_max_overlaps[i].item<double>();
      if (best < options_.min_pos_iou) continue;
      if (options_.gt_max_assign_all) {
        assigned.masked_fill_(overlaps[i] == best, i + 1);
      } else {
        assigned[overlaps[i].argmax()] = i + 1;
      }
    }
  }
  return {assigned, max_overlaps};
}

}  // namespace ddp3d::models
