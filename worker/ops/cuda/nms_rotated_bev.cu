// Rotated BEV NMS on the GPU, in the usual two phases: a kernel fills a bit mask where bit j
// of row i says "box j (later in score order) overlaps box i above the threshold"; the host
// then sweeps the rows in score order, which is cheap (N × N/64 words) and sequential anyway.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>
#include <vector>

#include "worker/ops/cuda/rotated_box_kernels.h"
#include "worker/ops/rotated_box_geometry.h"

namespace ddp3d::ops::cuda {
namespace {

constexpr int kBitsPerWord = 64;

// Grid (column blocks, row blocks); each block compares its 64 row boxes with its 64 column
// boxes, staged in shared memory.
__global__ void nms_mask_kernel(const float* __restrict__ boxes, int64_t n, float threshold,
                                unsigned long long* __restrict__ mask) {
  const int64_t row_block = blockIdx.y;
  const int64_t col_block = blockIdx.x;
  // Lower-triangle blocks only compare earlier boxes, which the sweep never needs.
  if (row_block > col_block) return;
  const int64_t col_words = (n + kBitsPerWord - 1) / kBitsPerWord;
  const int64_t rows_left = n - row_block * kBitsPerWord;
  const int64_t cols_left = n - col_block * kBitsPerWord;
  const int row_count = static_cast<int>(rows_left < kBitsPerWord ? rows_left : kBitsPerWord);
  const int col_count = static_cast<int>(cols_left < kBitsPerWord ? cols_left : kBitsPerWord);
  const int tid = static_cast<int>(threadIdx.x);

  __shared__ float col_boxes[kBitsPerWord * 5];
  if (tid < col_count) {
#pragma unroll
    for (int k = 0; k < 5; ++k) {
      col_boxes[tid * 5 + k] = boxes[(col_block * kBitsPerWord + tid) * 5 + k];
    }
  }
  __syncthreads();

  if (tid < row_count) {
    const int64_t i = row_block * kBitsPerWord + tid;
    float row_box[5];
#pragma unroll
    for (int k = 0; k < 5; ++k) row_box[k] = boxes[i * 5 + k];
    unsigned long long bits = 0;
    const int start = (row_block == col_block) ? tid + 1 : 0;
    for (int c = start; c < col_count; ++c) {
      if (geometry::rotated_box_iou(row_box, col_boxes + c * 5) > threshold) {
        bits |= 1ULL << c;
      }
    }
    mask[i * col_words + col_block] = bits;
  }
}

}  // namespace

at::Tensor nms_rotated_bev_sorted_cuda(const at::Tensor& sorted_boxes, double iou_threshold) {
  const c10::cuda::CUDAGuard guard(sorted_boxes.device());
  const int64_t n = sorted_boxes.size(0);
  const int64_t col_words = (n + kBitsPerWord - 1) / kBitsPerWord;
  // Zero-filled: the lower-triangle blocks the kernel skips must read as "no overlap".
  at::Tensor mask = at::zeros({n, col_words}, sorted_boxes.options().dtype(at::kLong));
  const dim3 grid(static_cast<unsigned>(col_words), static_cast<unsigned>(col_words));
  const dim3 block(kBitsPerWord);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  nms_mask_kernel<<<grid, block, 0, stream>>>(
      sorted_boxes.data_ptr<float>(), n, static_cast<float>(iou_threshold),
      reinterpret_cast<unsigned long long*>(mask.data_ptr<int64_t>()));
  C10_CUDA_KERNEL_LAUNCH_CHECK();

  const at::Tensor mask_cpu = mask.to(at::kCPU);
  const auto* rows = reinterpret_cast<const unsigned long long*>(mask_cpu.data_ptr<int64_t>());
  std::vector<unsigned long long> removed(static_cast<size_t>(col_words), 0ULL);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t word = i / kBitsPerWord;
    const int bit = static_cast<int>(i % kBitsPerWord);
    if (removed[static_cast<size_t>(word)] & (1ULL << bit)) continue;
    kept.push_back(i);
    const unsigned long long* row = rows + i * col_words;
    for (int64_t w = word; w < col_words; ++w) removed[static_cast<size_t>(w)] |= row[w];
  }
  return at::tensor(kept, at::TensorOptions().dtype(at::kLong));
}

}  // namespace ddp3d::ops::cuda
