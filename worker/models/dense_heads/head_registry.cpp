#include <array>
#include <cstdint>
#include <vector>

#include "worker/models/centerpoint/config.h"
#include "worker/models/dense_heads/anchor3d_head.h"
#include "worker/models/dense_heads/center_head.h"
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
    r.add("CenterHead", [](const config::Config& model) -> DenseHeadPtr {
      const CenterHeadConfig c = center_head_config(model);
      const auto grid = model.get<std::vector<int64_t>>("middle_encoder.output_shape");
      return std::make_shared<CenterHeadImpl>(c.head, c.train_cfg, c.test_cfg,
                                              std::array<int64_t, 2>{grid.at(0), grid.at(1)});
    });
    return r;
  }();
  return registry;
}

}  // namespace ddp3d::models
