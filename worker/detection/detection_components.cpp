#include "worker/detection/detection_components.h"

#include "worker/detection/kitti_detection_dataset.h"
#include "worker/detection/kitti_metric.h"
#include "worker/detection/repeat_dataset.h"
#include "worker/models/pointpillars/engine_model.h"

namespace ddp3d::detection {

void register_detection_components(engine::Registry<engine::Model>& models,
                                   engine::Registry<engine::Dataset>& datasets,
                                   engine::Registry<engine::Evaluator>& evaluators) {
  models::register_models(models);
  datasets.add("KittiDataset", make_kitti_dataset);
  datasets.add("SyntheticKitti", make_synthetic_kitti_dataset);
  // The inner dataset is built through the same registry, so any dataset can be repeated.
  datasets.add("RepeatDataset", [&datasets](const config::Config& cfg) {
    return std::make_shared<RepeatDataset>(datasets.build(cfg.node("dataset")),
                                           cfg.get<std::int64_t>("times"));
  });
  evaluators.add("KittiMetric", [](const config::Config& cfg) {
    const auto r = cfg.get<std::vector<double>>("pcd_limit_range");
    if (r.size() != 6) {
      throw config::ConfigError(cfg.origin("pcd_limit_range"), cfg.path() + ".pcd_limit_range",
                                "expected 6 numbers");
    }
    KittiMetricOptions options;
    options.pcd_limit_range = {r[0], r[1], r[2], r[3], r[4], r[5]};
    if (cfg.has("submission_prefix"))
      options.submission_prefix = cfg.get<std::string>("submission_prefix");
    options.format_only = cfg.get<bool>("format_only");
    if (options.format_only && options.submission_prefix.empty()) {
      throw config::ConfigError(cfg.origin("format_only"), cfg.path() + ".format_only",
                                "format_only writes submission_prefix's files: set it too");
    }
    return std::make_shared<KittiMetric>(options);
  });
}

}  // namespace ddp3d::detection
