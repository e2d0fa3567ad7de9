// Pairwise rotated-box measures on the GPU: one thread per (i, j) pair, the same geometry
// code as the CPU path (rotated_box_geometry.h) in float32.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "worker/ops/cuda/rotated_box_kernels.h"
#include "worker/ops/rotated_box_geometry.h"

namespace ddp3d::ops::cuda {
namespace {

constexpr int kTile = 16;

template <int Dim>
__global__ void pairwise_kernel(const float* __restrict__ a, const float* __restrict__ b, int64_t n,
                                int64_t m, int measure, float* __restrict__ out) {
  const int64_t i = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  if (i >= n || j >= m) return;
  float box_a[Dim];
  float box_b[Dim];
#pragma unroll
  for (int k = 0; k < Dim; ++k) {
    box_a[k] = a[i * Dim + k];
    box_b[k] = b[j * Dim + k];
  }
  float value;
  if constexpr (Dim == 7) {
    value = geometry::box3d_iou(box_a, box_b);
  } else if (measure == static_cast<int>(PairwiseMeasure::kBevIntersection)) {
    value = geometry::rotated_box_intersection(box_a, box_b);
  } else {
    value = geometry::rotated_box_iou(box_a, box_b);
  }
  out[i * m + j] = value;
}

}  // namespace

at::Tensor pairwise_box_measure_cuda(const at::Tensor& boxes1, const at::Tensor& boxes2,
                                     PairwiseMeasure measure) {
  const c10::cuda::CUDAGuard guard(boxes1.device());
  const int64_t n = boxes1.size(0);
  const int64_t m = boxes2.size(0);
  at::Tensor out = at::empty({n, m}, boxes1.options().dtype(at::kFloat));
  if (n == 0 || m == 0) return out;
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>((m + kTile - 1) / kTile),
                  static_cast<unsigned>((n + kTile - 1) / kTile));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (measure == PairwiseMeasure::k3dIou) {
    TORCH_CHECK(boxes1.size(1) == 7 && boxes2.size(1) == 7,
                "box_iou_3d (CUDA): boxes must be [N, 7]");
    pairwise_kernel<7>
        <<<grid, block, 0, stream>>>(boxes1.data_ptr<float>(), boxes2.data_ptr<float>(), n, m,
                                     static_cast<int>(measure), out.data_ptr<float>());
  } else {
    TORCH_CHECK(boxes1.size(1) == 5 && boxes2.size(1) == 5,
                "BEV box ops (CUDA): boxes must be [N, 5]");
    pairwise_kernel<5>
        <<<grid, block, 0, stream>>>(boxes1.data_ptr<float>(), boxes2.data_ptr<float>(), n, m,
                                     static_cast<int>(measure), out.data_ptr<float>());
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace ddp3d::ops::cuda
