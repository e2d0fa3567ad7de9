#include "worker/models/task_modules/anchor_3d_range_generator.h"

#include <ATen/ATen.h>

namespace ddp3d::models {
namespace {

// Centres of n cells spanning [lo, hi] (mmdet3d: linspace of n+1 edges, shifted by half a cell
// unless align_corner, first n kept).
at::Tensor cell_centres(double lo, double hi, int64_t n, bool align_corner,
                        const at::TensorOptions& options) {
  at::Tensor edges = at::linspace(lo, hi, n + 1, options.dtype(at::kDouble));
  if (!align_corner) edges = edges + (hi - lo) / static_cast<double>(n) / 2.0;
  return edges.narrow(0, 0, n);
}

}  // namespace

Anchor3DRangeGenerator::Anchor3DRangeGenerator(AnchorGeneratorOptions options)
    : options_(std::move(options)) {}

int64_t Anchor3DRangeGenerator::num_sizes() const {
  return static_cast<int64_t>(options_.sizes.size());
}
int64_t Anchor3DRangeGenerator::num_rotations() const {
  return static_cast<int64_t>(options_.rotations.size());
}
int64_t Anchor3DRangeGenerator::num_base_anchors() const {
  return num_sizes() * num_rotations();
}

at::Tensor Anchor3DRangeGenerator::grid_anchors(int64_t height, int64_t width,
                                                const at::TensorOptions& options) const {
  TORCH_CHECK(height > 0 && width > 0, "grid_anchors: feature map must be non-empty, got ", height,
              " x ", width);
  const int64_t s = num_sizes();
  const int64_t r = num_rotations();
  const auto dopt = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor rot = at::tensor(options_.rotations, dopt);
  std::vector<at::Tensor> per_size;
  for (int64_t k = 0; k < s; ++k) {
    const auto& range = options_.ranges.size() == 1 ? options_.ranges[0] : options_.ranges[k];
    const auto& size = options_.sizes[static_cast<size_t>(k)];
    const at::Tensor ys = cell_centres(range[1], range[4], height, options_.align_corner, dopt);
    const at::Tensor xs = cell_centres(range[0], range[3], width, options_.align_corner, dopt);
    // A single z level: the range's z (the two z bounds coincide in mmdet3d's configs).
    const double z =
        cell_centres(range[2], range[5], 1, options_.align_corner, dopt).item<double>();
    const at::Tensor y = ys.view({height, 1, 1}).expand({height, width, r});
    const at::Tensor x = xs.view({1, width, 1}).expand({height, width, r});
    const at::Tensor yaw = rot.view({1, 1, r}).expand({height, width, r});
    const at::Tensor ones = at::ones({height, width, r}, dopt);
    per_size.push_back(
        at::stack({x, y, ones * z, ones * size[0], ones * size[1], ones * size[2], yaw},
                  -1));  // [H, W, R, 7]
  }
  return at::stack(per_size, 2).to(options);  // [H, W, S, R, 7]
}

}  // namespace ddp3d::models
