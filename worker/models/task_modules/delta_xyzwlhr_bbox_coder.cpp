#include "worker/models/task_modules/delta_xyzwlhr_bbox_coder.h"

#include <ATen/ATen.h>

namespace ddp3d::models {

at::Tensor DeltaXYZWLHRBBoxCoder::encode(const at::Tensor& anchors, const at::Tensor& boxes) {
  TORCH_CHECK(anchors.size(-1) == code_size && boxes.size(-1) == code_size,
              "DeltaXYZWLHRBBoxCoder::encode: anchors and boxes must end in 7, got ",
              anchors.sizes(), " and ", boxes.sizes());
  const auto a = anchors.unbind(-1);
  const auto g = boxes.unbind(-1);
  const at::Tensor za = a[2] + a[5] / 2;  // bottom → gravity centre
  const at::Tensor zg = g[2] + g[5] / 2;
  const at::Tensor diagonal = at::sqrt(a[3] * a[3] + a[4] * a[4]);
  return at::stack({(g[0] - a[0]) / diagonal, (g[1] - a[1]) / diagonal, (zg - za) / a[5],
                    at::log(g[3] / a[3]), at::log(g[4] / a[4]), at::log(g[5] / a[5]), g[6] - a[6]},
                   -1);
}

at::Tensor DeltaXYZWLHRBBoxCoder::decode(const at::Tensor& anchors, const at::Tensor& deltas) {
  TORCH_CHECK(anchors.size(-1) == code_size && deltas.size(-1) == code_size,
              "DeltaXYZWLHRBBoxCoder::decode: anchors and deltas must end in 7, got ",
              anchors.sizes(), " and ", deltas.sizes());
  const auto a = anchors.unbind(-1);
  const auto t = deltas.unbind(-1);
  const at::Tensor za = a[2] + a[5] / 2;
  const at::Tensor diagonal = at::sqrt(a[3] * a[3] + a[4] * a[4]);
  const at::Tensor dz = at::exp(t[5]) * a[5];
  const at::Tensor zg = t[2] * a[5] + za;
  return at::stack({t[0] * diagonal + a[0], t[1] * diagonal + a[1], zg - dz / 2,
                    at::exp(t[3]) * a[3], at::exp(t[4]) * a[4], dz, t[6] + a[6]},
                   -1);
}

}  // namespace ddp3d::models
