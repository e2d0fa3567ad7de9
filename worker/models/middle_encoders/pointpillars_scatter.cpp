#include "worker/models/middle_encoders/pointpillars_scatter.h"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>

namespace ddp3d::models {

PointPillarsScatterImpl::PointPillarsScatterImpl(const PointPillarsScatterOptions& options)
    : options_(options) {}

at::Tensor PointPillarsScatterImpl::forward(const at::Tensor& pillar_features,
                                            const at::Tensor& coors, int64_t batch_size) {
  const int64_t ny = options_.output_shape[0];
  const int64_t nx = options_.output_shape[1];
  const int64_t c = options_.in_channels;
  TORCH_CHECK(pillar_features.dim() == 2 && pillar_features.size(1) == c,
              "PointPillarsScatter: pillar features must be [M, ", c, "], got ",
              pillar_features.sizes());
  TORCH_CHECK(coors.dim() == 2 && coors.size(1) == 4 && coors.size(0) == pillar_features.size(0),
              "PointPillarsScatter: coors must be [M, 4] (batch, z, y, x), got ", coors.sizes());
  TORCH_CHECK(batch_size > 0, "PointPillarsScatter: batch_size must be > 0");
  const at::Tensor idx = coors.to(at::kLong);
  if (idx.size(0) > 0) {
    const at::Tensor lo = std::get<0>(idx.min(0));
    const at::Tensor hi = std::get<0>(idx.max(0));
    TORCH_CHECK(lo[0].item<int64_t>() >= 0 && hi[0].item<int64_t>() < batch_size,
                "PointPillarsScatter: coors batch index outside [0, ", batch_size, ")");
    TORCH_CHECK(lo[2].item<int64_t>() >= 0 && hi[2].item<int64_t>() < ny &&
                    lo[3].item<int64_t>() >= 0 && hi[3].item<int64_t>() < nx,
                "PointPillarsScatter: coors (y, x) outside the ", ny, " x ", nx, " canvas");
  }
  // Written straight into the channels-first canvas: canvas[b, :, y·nx + x] = feature (index_put
  // keeps the gradient to the features). Filling a channels-last canvas and transposing it
  // instead cost a strided copy of the whole canvas: ~6x slower at 496 x 432 x 64.
  const at::Tensor cell = idx.select(1, 2) * nx + idx.select(1, 3);
  at::Tensor canvas = at::zeros({batch_size, c, ny * nx}, pillar_features.options());
  canvas.index_put_({at::indexing::TensorIndex(idx.select(1, 0)), at::indexing::Slice(),
                     at::indexing::TensorIndex(cell)},
                    pillar_features);
  return canvas.view({batch_size, c, ny, nx});
}

}  // namespace ddp3d::models
