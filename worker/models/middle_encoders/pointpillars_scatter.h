// PointPillarsScatter: places each pillar's feature vector at its (y, x) cell of a dense BEV
// canvas, one canvas per sample of the batch; empty cells stay zero.
#pragma once

#include "worker/models/middle_encoders/middle_encoder.h"
#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

class PointPillarsScatterImpl : public MiddleEncoderImpl {
 public:
  explicit PointPillarsScatterImpl(const PointPillarsScatterOptions& options);

  // pillar_features [M, C], coors [M, 4] = (batch, z, y, x) → [batch_size, C, ny, nx].
  // Each (batch, y, x) must occur at most once (voxelization guarantees it).
  at::Tensor forward(const at::Tensor& pillar_features, const at::Tensor& coors,
                     int64_t batch_size) override;

 private:
  PointPillarsScatterOptions options_;
};
TORCH_MODULE(PointPillarsScatter);

}  // namespace ddp3d::models
