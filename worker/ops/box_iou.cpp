#include "worker/ops/box_iou.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "worker/ops/rotated_box_geometry.h"

#ifdef DDP3D_WITH_CUDA
#include "worker/ops/cuda/rotated_box_kernels.h"
#endif

namespace ddp3d::ops {
namespace {

void check_boxes(const at::Tensor& boxes, int64_t min_dim, const char* fn, const char* arg) {
  TORCH_CHECK(boxes.defined(), fn, ": ", arg, " is undefined");
  TORCH_CHECK(boxes.dim() == 2 && boxes.size(1) >= min_dim, fn, ": ", arg,
              " must be [N, >=", min_dim, "], got ", boxes.sizes());
  TORCH_CHECK(boxes.is_floating_point(), fn, ": ", arg, " must be floating point, got ",
              boxes.scalar_type());
}

// Pairwise kernel on the CPU in float64 (the IoU thresholds of the assigner and of KITTI
// evaluation sit on exact values such as 0.7, so the extra precision is cheap insurance).
template <typename F>
at::Tensor pairwise_cpu(const at::Tensor& boxes1, const at::Tensor& boxes2, int64_t dim, F&& f) {
  const at::Tensor a = boxes1.narrow(1, 0, dim).to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor b = boxes2.narrow(1, 0, dim).to(at::kCPU, at::kDouble).contiguous();
  const int64_t n = a.size(0);
  const int64_t m = b.size(0);
  at::Tensor out = at::empty({n, m}, a.options());
  if (n == 0 || m == 0) return out.to(boxes1.scalar_type());
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  double* po = out.data_ptr<double>();
  // Grain: a few rows per task; one row of M pairs is already a fair amount of work.
  at::parallel_for(0, n, 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      for (int64_t j = 0; j < m; ++j) po[i * m + j] = f(pa + i * dim, pb + j * dim);
    }
  });
  return out.to(boxes1.scalar_type());
}

#ifdef DDP3D_WITH_CUDA
at::Tensor pairwise_cuda(const at::Tensor& boxes1, const at::Tensor& boxes2, int64_t dim,
                         cuda::PairwiseMeasure measure) {
  TORCH_CHECK(boxes2.is_cuda() && boxes2.device() == boxes1.device(),
              "box ops: both box sets must be on the same CUDA device");
  const at::Tensor a = boxes1.narrow(1, 0, dim).to(at::kFloat).contiguous();
  const at::Tensor b = boxes2.narrow(1, 0, dim).to(at::kFloat).contiguous();
  return cuda::pairwise_box_measure_cuda(a, b, measure).to(boxes1.scalar_type());
}
#endif

#ifndef DDP3D_WITH_CUDA
[[noreturn]] at::Tensor no_cuda_error(const char* fn) {
  TORCH_CHECK(false, fn, ": got CUDA tensors but ddp3d was built without DDP3D_WITH_CUDA");
  throw std::logic_error("unreachable");
}
#endif

}  // namespace

at::Tensor box_intersection_rotated_bev(const at::Tensor& boxes1, const at::Tensor& boxes2) {
  check_boxes(boxes1, 5, "box_intersection_rotated_bev", "boxes1");
  check_boxes(boxes2, 5, "box_intersection_rotated_bev", "boxes2");
  if (boxes1.is_cuda()) {
#ifdef DDP3D_WITH_CUDA
    return pairwise_cuda(boxes1, boxes2, 5, cuda::PairwiseMeasure::kBevIntersection);
#else
    return no_cuda_error("box_intersection_rotated_bev");
#endif
  }
  return pairwise_cpu(boxes1, boxes2, 5, [](const double* a, const double* b) {
    return geometry::rotated_box_intersection(a, b);
  });
}

at::Tensor box_iou_rotated_bev(const at::Tensor& boxes1, const at::Tensor& boxes2) {
  check_boxes(boxes1, 5, "box_iou_rotated_bev", "boxes1");
  check_boxes(boxes2, 5, "box_iou_rotated_bev", "boxes2");
  if (boxes1.is_cuda()) {
#ifdef DDP3D_WITH_CUDA
    return pairwise_cuda(boxes1, boxes2, 5, cuda::PairwiseMeasure::kBevIou);
#else
    return no_cuda_error("box_iou_rotated_bev");
#endif
  }
  return pairwise_cpu(boxes1, boxes2, 5, [](const double* a, const double* b) {
    return geometry::rotated_box_iou(a, b);
  });
}

at::Tensor box_iou_3d(const at::Tensor& boxes1, const at::Tensor& boxes2) {
  check_boxes(boxes1, 7, "box_iou_3d", "boxes1");
  check_boxes(boxes2, 7, "box_iou_3d", "boxes2");
  if (boxes1.is_cuda()) {
#ifdef DDP3D_WITH_CUDA
    return pairwise_cuda(boxes1, boxes2, 7, cuda::PairwiseMeasure::k3dIou);
#else
    return no_cuda_error("box_iou_3d");
#endif
  }
  return pairwise_cpu(boxes1, boxes2, 7,
                      [](const double* a, const double* b) { return geometry::box3d_iou(a, b); });
}

// Axis-aligned IoU is plain broadcasting arithmetic: it runs on any device as is.
at::Tensor box_iou_aligned_bev(const at::Tensor& boxes1, const at::Tensor& boxes2) {
  check_boxes(boxes1, 4, "box_iou_aligned_bev", "boxes1");
  check_boxes(boxes2, 4, "box_iou_aligned_bev", "boxes2");
  const at::Tensor a = boxes1.narrow(1, 0, 4).unsqueeze(1);  // [N, 1, 4]
  const at::Tensor b = boxes2.narrow(1, 0, 4).unsqueeze(0);  // [1, M, 4]
  const at::Tensor area_a = (a.select(2, 2) - a.select(2, 0)) * (a.select(2, 3) - a.select(2, 1));
  const at::Tensor area_b = (b.select(2, 2) - b.select(2, 0)) * (b.select(2, 3) - b.select(2, 1));
  const at::Tensor lt = at::maximum(a.narrow(2, 0, 2), b.narrow(2, 0, 2));
  const at::Tensor rb = at::minimum(a.narrow(2, 2, 2), b.narrow(2, 2, 2));
  const at::Tensor wh = (rb - lt).clamp_min(0);
  const at::Tensor inter = wh.select(2, 0) * wh.select(2, 1);
  const at::Tensor uni = (area_a + area_b - inter).clamp_min(1e-6);
  return inter / uni;
}

at::Tensor nearest_bev(const at::Tensor& boxes) {
  check_boxes(boxes, 7, "nearest_bev", "boxes");
  const at::Tensor yaw = boxes.select(1, 6);
  // |yaw| wrapped into [-π/2, π/2): beyond π/4 the box is closer to lying across the x axis.
  const at::Tensor wrapped = yaw - at::floor(yaw / M_PI + 0.5) * M_PI;
  const at::Tensor swap = (wrapped.abs() > M_PI / 4).unsqueeze(1);
  const at::Tensor dims =
      boxes.index_select(1, at::tensor({3, 4}, boxes.options().dtype(at::kLong)));
  const at::Tensor dims_swapped = dims.flip({1});
  const at::Tensor half = at::where(swap, dims_swapped, dims) / 2;
  const at::Tensor centres = boxes.narrow(1, 0, 2);
  return at::cat({centres - half, centres + half}, 1);
}

at::Tensor box_iou_nearest_bev(const at::Tensor& boxes1, const at::Tensor& boxes2) {
  return box_iou_aligned_bev(nearest_bev(boxes1), nearest_bev(boxes2));
}

}  // namespace ddp3d::ops
