#include "worker/config/consistency.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace ddp3d::config {
namespace {

// Looks up a dotted path below `v`; nullptr when any part is missing.
const Value* at(const Value& v, const std::string& dotted) {
  const Value* node = &v;
  for (const std::string& part : split_key(dotted)) {
    if (node->is_list()) {
      const std::size_t index = std::strtoul(part.c_str(), nullptr, 10);
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
          index >= node->items().size()) {
        return nullptr;
      }
      node = &node->items()[index];
      continue;
    }
    node = node->find(part);
    if (node == nullptr) return nullptr;
  }
  return node;
}

std::vector<std::int64_t> ints(const Value* v) {
  std::vector<std::int64_t> out;
  if (v != nullptr && v->is_list()) {
    for (const Value& item : v->items()) out.push_back(item.as_int());
  }
  return out;
}

std::vector<double> numbers(const Value* v) {
  std::vector<double> out;
  if (v != nullptr && v->is_list()) {
    for (const Value& item : v->items()) out.push_back(item.as_double());
  }
  return out;
}

template <typename T>
std::string show(const std::vector<T>& xs) {
  std::string s = "[";
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      s += (i ? ", " : "") + format_double(xs[i]);
    } else {
      s += (i ? ", " : "") + std::to_string(xs[i]);
    }
  }
  return s + "]";
}

class Checker {
 public:
  Checker(const Value& root, std::vector<Issue>& issues) : root_(root), issues_(issues) {}

  // Reports `key` (its value's origin) unless `ok`.
  void expect(bool ok, const std::string& key, const std::string& message) {
    if (ok) return;
    const Value* v = at(root_, key);
    issues_.push_back({v != nullptr ? v->origin().to_string() : "", key, message});
  }

  void pointpillars() {
    const std::string vl = "model.data_preprocessor.voxel_layer.";
    const std::vector<double> range = numbers(at(root_, vl + "point_cloud_range"));
    const std::vector<double> voxel = numbers(at(root_, vl + "voxel_size"));
    const std::vector<std::int64_t> shape = ints(at(root_, "model.middle_encoder.output_shape"));
    if (range.size() == 6 && voxel.size() == 3 && shape.size() == 2) {
      const std::vector<std::int64_t> grid = {std::llround((range[4] - range[1]) / voxel[1]),
                                              std::llround((range[3] - range[0]) / voxel[0])};
      expect(grid == shape, "model.middle_encoder.output_shape",
             "expected " + show(grid) + " ([ny, nx] = range / voxel size from " +
                 at(root_, vl + "voxel_size")->origin().to_string() + "), got " + show(shape));
      const Value* own_range = at(root_, "model.voxel_encoder.point_cloud_range");
      if (own_range != nullptr && !own_range->is_null()) {
        expect(numbers(own_range) == range, "model.voxel_encoder.point_cloud_range",
               "differs from " + vl + "point_cloud_range " + show(range));
      }
      const Value* own_voxel = at(root_, "model.voxel_encoder.voxel_size");
      if (own_voxel != nullptr && !own_voxel->is_null()) {
        expect(numbers(own_voxel) == voxel, "model.voxel_encoder.voxel_size",
               "differs from " + vl + "voxel_size " + show(voxel));
      }
    }

    const std::vector<std::int64_t> pfn = ints(at(root_, "model.voxel_encoder.feat_channels"));
    const std::int64_t scatter_in = at(root_, "model.middle_encoder.in_channels")->as_int();
    if (!pfn.empty()) {
      expect(scatter_in == pfn.back(), "model.middle_encoder.in_channels",
             "expected " + std::to_string(pfn.back()) +
                 " (the last of model.voxel_encoder.feat_channels), got " +
                 std::to_string(scatter_in));
    }
    const std::int64_t backbone_in = at(root_, "model.backbone.in_channels")->as_int();
    expect(backbone_in == scatter_in, "model.backbone.in_channels",
           "expected " + std::to_string(scatter_in) + " (model.middle_encoder.in_channels), got " +
               std::to_string(backbone_in));

    const std::vector<std::int64_t> stage_out = ints(at(root_, "model.backbone.out_channels"));
    const std::size_t stages = stage_out.size();
    for (const char* key : {"model.backbone.layer_nums", "model.backbone.layer_strides"}) {
      expect(ints(at(root_, key)).size() == stages, key,
             "expected " + std::to_string(stages) + " entries (one per backbone stage)");
    }
    const std::vector<std::int64_t> neck_in = ints(at(root_, "model.neck.in_channels"));
    expect(neck_in == stage_out, "model.neck.in_channels",
           "expected " + show(stage_out) + " (model.backbone.out_channels), got " + show(neck_in));
    const std::vector<std::int64_t> neck_out = ints(at(root_, "model.neck.out_channels"));
    expect(neck_out.size() == neck_in.size(), "model.neck.out_channels",
           "expected " + std::to_string(neck_in.size()) + " entries (one per input stage)");
    expect(numbers(at(root_, "model.neck.upsample_strides")).size() == neck_in.size(),
           "model.neck.upsample_strides",
           "expected " + std::to_string(neck_in.size()) + " entries (one per input stage)");
    std::int64_t concat = 0;
    for (std::int64_t c : neck_out) concat += c;
    const std::int64_t head_in = at(root_, "model.bbox_head.in_channels")->as_int();
    expect(head_in == concat, "model.bbox_head.in_channels",
           "expected " + std::to_string(concat) + " (the sum of model.neck.out_channels), got " +
               std::to_string(head_in));

    const std::string ag = "model.bbox_head.anchor_generator.";
    const std::size_t sizes = at(root_, ag + "sizes")->items().size();
    const std::size_t ranges = at(root_, ag + "ranges")->items().size();
    expect(ranges == 1 || ranges == sizes, ag + "ranges",
           "expected 1 range or one per anchor size (" + std::to_string(sizes) + "), got " +
               std::to_string(ranges));
    const std::int64_t num_classes = at(root_, "model.bbox_head.num_classes")->as_int();
    if (at(root_, "model.bbox_head.assign_per_class")->as_bool()) {
      expect(static_cast<std::int64_t>(sizes) == num_classes, ag + "sizes",
             "expected one anchor size per class (" + std::to_string(num_classes) +
                 ", model.bbox_head.num_classes) with assign_per_class, got " +
                 std::to_string(sizes));
      const std::size_t assigners = at(root_, "model.train_cfg.assigner")->items().size();
      expect(static_cast<std::int64_t>(assigners) == num_classes, "model.train_cfg.assigner",
             "expected one assigner per class (" + std::to_string(num_classes) +
                 ") with assign_per_class, got " + std::to_string(assigners));
    }
    for (const char* loader : {"train_dataloader", "val_dataloader", "test_dataloader"}) {
      std::string ds = std::string(loader) + ".dataset";
      const Value* type = at(root_, ds + ".type");
      if (type != nullptr && type->as_string() == "RepeatDataset") ds += ".dataset";
      const Value* classes = at(root_, ds + ".metainfo.classes");
      if (classes == nullptr) continue;
      expect(static_cast<std::int64_t>(classes->items().size()) == num_classes,
             ds + ".metainfo.classes",
             "expected " + std::to_string(num_classes) +
                 " class names (model.bbox_head.num_classes), got " +
                 std::to_string(classes->items().size()));
    }
  }

  void schedule() {
    const Value* phases = at(root_, "param_scheduler");
    if (phases != nullptr && phases->is_list()) {
      for (std::size_t i = 0; i < phases->items().size(); ++i) {
        const Value& p = phases->items()[i];
        const Value* begin = p.find("begin");
        const Value* end = p.find("end");
        if (begin != nullptr && end != nullptr && !end->is_null()) {
          expect(end->as_double() > begin->as_double(),
                 "param_scheduler." + std::to_string(i) + ".end",
                 "must be greater than begin (" + begin->describe() + "), got " + end->describe());
        }
      }
    }
    const Value* by_epoch = at(root_, "train_cfg.by_epoch");
    if (by_epoch != nullptr) {
      const char* needed = by_epoch->as_bool() ? "max_epochs" : "max_iters";
      if (at(root_, std::string("train_cfg.") + needed) == nullptr) {
        issues_.push_back({at(root_, "train_cfg")->origin().to_string(),
                           std::string("train_cfg.") + needed,
                           std::string("missing required key (by_epoch is ") +
                               (by_epoch->as_bool() ? "true" : "false") + ")"});
      }
    }
  }

 private:
  const Value& root_;
  std::vector<Issue>& issues_;
};

}  // namespace

void check_consistency(const Value& root, std::vector<Issue>& issues) {
  Checker checker(root, issues);
  const Value* type = at(root, "model.type");
  if (type != nullptr && type->as_string() == "PointPillars") checker.pointpillars();
  checker.schedule();
}

}  // namespace ddp3d::config
