#include "worker/models/pointpillars/options.h"

#include <stdexcept>

#include "worker/models/pointpillars/checks.h"

namespace ddp3d::models {

NormType parse_norm_type(const std::string& type) {
  // mmcv registers BatchNorm as 'BN', 'BN1d', 'BN2d' (the dimension follows from the layer).
  if (type == "BN" || type == "BN1d" || type == "BN2d") return NormType::kBatchNorm;
  if (type == "SyncBN") return NormType::kSyncBatchNorm;
  throw std::invalid_argument("unknown norm type '" + type +
                              "' (expected one of BN, BN1d, BN2d, SyncBN)");
}

PointPillarsOptions pointpillars_kitti_3class_options() {
  return PointPillarsOptions{};
}

PointPillarsOptions pointpillars_kitti_car_options() {
  PointPillarsOptions o;
  o.bbox_head.num_classes = 1;
  o.bbox_head.anchor_generator.ranges = {{0.0, -39.68, -1.78, 69.12, 39.68, -1.78}};
  o.bbox_head.anchor_generator.sizes = {{3.9, 1.6, 1.56}};
  o.train_cfg.assigner = {{0.6, 0.45, 0.45, true, true}};
  return o;
}

void validate(const PointPillarsOptions& o) {
  // The first problem is thrown: that is what a programmatic caller can act on.
  class Throw : public OptionIssues {
   public:
    void report(const std::string& key, const std::string& why) override {
      throw std::invalid_argument("invalid model option " + key + ": " + why);
    }
  } first;
  check_connections(o, first);
  if (o.backbone_type == "SECOND") check_second_stages(o.backbone, first);
  check_parts(o, first);
}

}  // namespace ddp3d::models
