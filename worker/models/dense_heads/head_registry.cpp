#include "worker/models/dense_heads/anchor3d_head.h"
#include "worker/models/dense_heads/dense_head.h"
#include "worker/models/pointpillars/config.h"

namespace ddp3d::models {

config::Registry<DenseHeadImpl>& head_registry() {
  static config::Registry<DenseHeadImpl> registry = [] {
    config::Registry<DenseHeadImpl> r("bbox_head");
    r.add("Anchor3DHead", [](const config::Config& model) -> DenseHeadPtr {
      const PointPillarsOptions o = pointpillars_options_from_config(model);
      return std::make_shared<Anchor3DHeadImpl>(o.bbox_head, o.train_cfg, o.test_cfg);
    });
    return r;
  }();
  return registry;
}

}  // namespace ddp3d::models
