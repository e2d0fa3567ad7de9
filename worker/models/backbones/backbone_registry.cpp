#include "worker/models/backbones/backbone.h"
#include "worker/models/backbones/second.h"
#include "worker/models/pointpillars/fields.h"

namespace ddp3d::models {

config::Registry<BackboneImpl>& backbone_registry() {
  static config::Registry<BackboneImpl> registry = [] {
    config::Registry<BackboneImpl> r("backbone");
    r.add("SECOND", [](const config::Config& cfg) -> BackbonePtr {
      SECONDOptions o;
      second_fields().read(cfg, o);
      return std::make_shared<SECONDImpl>(o);
    });
    return r;
  }();
  return registry;
}

}  // namespace ddp3d::models
