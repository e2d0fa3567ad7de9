#include "worker/models/middle_encoders/middle_encoder.h"
#include "worker/models/middle_encoders/pointpillars_scatter.h"
#include "worker/models/pointpillars/fields.h"

namespace ddp3d::models {

config::Registry<MiddleEncoderImpl>& middle_encoder_registry() {
  static config::Registry<MiddleEncoderImpl> registry = [] {
    config::Registry<MiddleEncoderImpl> r("middle_encoder");
    r.add("PointPillarsScatter", [](const config::Config& cfg) -> MiddleEncoderPtr {
      PointPillarsScatterOptions o;
      scatter_fields().read(cfg, o);
      return std::make_shared<PointPillarsScatterImpl>(o);
    });
    return r;
  }();
  return registry;
}

}  // namespace ddp3d::models
