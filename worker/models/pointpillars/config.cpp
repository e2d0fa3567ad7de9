#include "worker/models/pointpillars/config.h"

#include <cmath>
#include <vector>

#include "worker/models/pointpillars/checks.h"
#include "worker/models/pointpillars/fields.h"

namespace ddp3d::models {
namespace {

// The options as read, without validate(): the checks below report every problem instead.
PointPillarsOptions read_options(const config::Config& model) {
  PointPillarsOptions o;
  pointpillars_fields().read(model, o);
  // The encoder's geometry defaults to the voxelizer's (mmdet3d configs repeat it).
  const VoxelLayerOptions& voxel_layer = o.data_preprocessor.voxel_layer;
  const config::Config ve = model.node("voxel_encoder");
  if (!ve.has("voxel_size")) o.voxel_encoder.voxel_size = voxel_layer.voxel_size;
  if (!ve.has("point_cloud_range"))
    o.voxel_encoder.point_cloud_range = voxel_layer.point_cloud_range;
  return o;
}

// Reports each problem at its key's origin in the config.
class ConfigIssues : public OptionIssues {
 public:
  explicit ConfigIssues(config::CrossCheck& check) : check_(check) {}
  void report(const std::string& key, const std::string& message) override {
    check_.expect(false, key, message);
  }

 private:
  config::CrossCheck& check_;
};

// The BEV grid is the voxel layer's range over its voxel size; the encoder's copies agree.
void check_grid(config::CrossCheck& c, const std::string& model) {
  const std::string vl = model + ".data_preprocessor.voxel_layer.";
  const std::vector<double> range = c.numbers(vl + "point_cloud_range");
  const std::vector<double> voxel = c.numbers(vl + "voxel_size");
  const std::vector<std::int64_t> shape = c.ints(model + ".middle_encoder.output_shape");
  if (range.size() != 6 || voxel.size() != 3 || shape.size() != 2) return;
  const std::vector<std::int64_t> grid = {std::llround((range[4] - range[1]) / voxel[1]),
                                          std::llround((range[3] - range[0]) / voxel[0])};
  c.expect(grid == shape, model + ".middle_encoder.output_shape",
           "expected " + config::show(grid) + " ([ny, nx] = range / voxel size from " +
               c.origin(vl + "voxel_size") + "), got " + config::show(shape));
  for (const char* copy : {"point_cloud_range", "voxel_size"}) {
    const std::string key = model + ".voxel_encoder." + copy;
    const config::Value* own = c.at(key);
    if (own == nullptr || own->is_null()) continue;
    const std::vector<double>& want = std::string(copy) == "voxel_size" ? voxel : range;
    c.expect(c.numbers(key) == want, key, "differs from " + vl + copy + " " + config::show(want));
  }
}

// Every dataset names as many classes as the head scores.
void check_class_names(config::CrossCheck& c, const std::string& model) {
  const config::Value* classes_in_head = c.at(model + ".bbox_head.num_classes");
  if (classes_in_head == nullptr) return;
  const std::int64_t num_classes = classes_in_head->as_int();
  for (const char* loader : {"train_dataloader", "val_dataloader", "test_dataloader"}) {
    std::string ds = std::string(loader) + ".dataset";
    const config::Value* type = c.at(ds + ".type");
    if (type != nullptr && type->as_string() == "RepeatDataset") ds += ".dataset";
    const config::Value* classes = c.at(ds + ".metainfo.classes");
    if (classes == nullptr) continue;
    const auto got = static_cast<std::int64_t>(classes->items().size());
    c.expect(got == num_classes, ds + ".metainfo.classes",
             "expected " + std::to_string(num_classes) +
                 " class names (model.bbox_head.num_classes), got " + std::to_string(got));
  }
}

void report_config_error(config::CrossCheck& c, const config::ConfigError& e) {
  for (const config::Issue& issue : e.issues()) c.report(issue.origin, issue.key, issue.message);
}

}  // namespace

PointPillarsOptions pointpillars_options_from_config(const config::Config& model) {
  PointPillarsOptions o = read_options(model);
  validate(o);
  return o;
}

void check_pointpillars_config(config::CrossCheck& c, const std::string& key) {
  check_grid(c, key);
  try {
    ConfigIssues issues(c);
    check_connections(read_options(c.view(key)), issues);
  } catch (const config::ConfigError& e) {
    report_config_error(c, e);
  }
  check_class_names(c, key);
}

void check_second_config(config::CrossCheck& c, const std::string& key) {
  SECONDOptions o;
  second_fields().read(c.view(key), o);
  ConfigIssues issues(c);
  check_second_stages(o, issues);
}

}  // namespace ddp3d::models
