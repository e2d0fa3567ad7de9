#include "worker/ops/nms_rotated.h"

#include <ATen/ATen.h>

#include <vector>

#include "worker/ops/rotated_box_geometry.h"

#ifdef DDP3D_WITH_CUDA
#include "worker/ops/cuda/rotated_box_kernels.h"
#endif

namespace ddp3d::ops {

at::Tensor nms_rotated_bev(const at::Tensor& boxes, const at::Tensor& scores,
                           double iou_threshold) {
  TORCH_CHECK(boxes.dim() == 2 && boxes.size(1) == 5,
              "nms_rotated_bev: boxes must be [N, 5] (x, y, dx, dy, yaw), got ", boxes.sizes());
  TORCH_CHECK(scores.dim() == 1 && scores.size(0) == boxes.size(0),
              "nms_rotated_bev: scores must be [N] with N = ", boxes.size(0), ", got ",
              scores.sizes());
  TORCH_CHECK(boxes.device() == scores.device(),
              "nms_rotated_bev: boxes and scores must be on the same device");
  const auto index_options = boxes.options().dtype(at::kLong);
  if (boxes.size(0) == 0) return at::empty({0}, index_options);
  // Stable sort: equal scores keep input order, so results do not depend on the sort kernel.
  const at::Tensor order =
      std::get<1>(scores.sort(/*stable=*/true, /*dim=*/0, /*descending=*/true));

  if (boxes.is_cuda()) {
#ifdef DDP3D_WITH_CUDA
    const at::Tensor sorted = boxes.index_select(0, order).to(at::kFloat).contiguous();
    const at::Tensor kept = cuda::nms_rotated_bev_sorted_cuda(sorted, iou_threshold);
    return order.index_select(0, kept.to(order.device()));
#else
    TORCH_CHECK(false,
                "nms_rotated_bev: got CUDA tensors but ddp3d was built without "
                "DDP3D_WITH_CUDA");
#endif
  }

  const at::Tensor sorted = boxes.index_select(0, order).to(at::kDouble).contiguous();
  const int64_t n = sorted.size(0);
  const double* p = sorted.data_ptr<double>();
  std::vector<char> suppressed(static_cast<size_t>(n), 0);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i) {
    if (suppressed[static_cast<size_t>(i)]) continue;
    kept.push_back(i);
    for (int64_t j = i + 1; j < n; ++j) {
      if (!suppressed[static_cast<size_t>(j)] &&
          geometry::rotated_box_iou(p + i * 5, p + j * 5) > iou_threshold) {
        suppressed[static_cast<size_t>(j)] = 1;
      }
    }
  }
  const at::Tensor kept_t =
      at::tensor(kept, at::TensorOptions().dtype(at::kLong)).to(order.device());
  return order.index_select(0, kept_t);
}

}  // namespace ddp3d::ops
