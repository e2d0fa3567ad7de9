#include "worker/models/necks/neck.h"
#include "worker/models/necks/second_fpn.h"
#include "worker/models/pointpillars/fields.h"

namespace ddp3d::models {

config::Registry<NeckImpl>& neck_registry() {
  static config::Registry<NeckImpl> registry = [] {
    config::Registry<NeckImpl> r("neck");
    r.add("SECONDFPN", [](const config::Config& cfg) -> NeckPtr {
      SECONDFPNOptions o;
      second_fpn_fields().read(cfg, o);
      return std::make_shared<SECONDFPNImpl>(o);
    });
    return r;
  }();
  return registry;
}

}  // namespace ddp3d::models
