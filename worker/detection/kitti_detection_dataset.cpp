#include "worker/detection/kitti_detection_dataset.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>
#include <mutex>
#include <sstream>

#include "common/io/atomic_file.h"
#include "common/io/regular_file.h"
#include "common/log.h"
#include "common/random_hex.h"
#include "worker/detection/kitti_eval_record.h"

namespace ddp3d::detection {
namespace fs = std::filesystem;

KittiDetectionDataset::KittiDetectionDataset(data::KittiDataset frames, DetectionPipeline pipeline,
                                             bool test_mode)
    : frames_(std::move(frames)), pipeline_(std::move(pipeline)), test_mode_(test_mode) {
  for (const std::string& c : frames_.class_names())
    class_list_ += (class_list_.empty() ? "" : ",") + c;
}

std::set<std::string> KittiDetectionDataset::list_fields() const {
  return {"points", "gt_bboxes_3d", "gt_labels_3d", "eval_gt", "calib"};
}

engine::Sample KittiDetectionDataset::get(std::int64_t index, at::Generator& rng) const {
  const data::KittiFrame f = frames_.load(static_cast<std::size_t>(index));
  data::DetectionSample s{f.points.narrow(1, 0, pipeline_.use_dim()).contiguous(), f.gt_boxes,
                          f.gt_labels};
  std::uint64_t seed = 0;
  {
    std::lock_guard<std::mutex> lock(rng.mutex());
    seed = at::check_generator<at::CPUGeneratorImpl>(rng)->random64();
  }
  std::mt19937_64 engine(seed);
  pipeline_.apply(s, engine);

  engine::Sample out;
  out.tensors["points"] = s.points;
  if (pipeline_.with_annotations() && !test_mode_) {
    out.tensors["gt_bboxes_3d"] = s.gt_boxes;
    out.tensors["gt_labels_3d"] = s.gt_labels;
  }
  // The evaluator scores against every label line of the frame (DontCare, Van, ... included),
  // in the camera frame, untouched by augmentation.
  out.tensors["eval_gt"] = pack_objects(f.objects);
  out.tensors["calib"] = pack_calib(f.calib);
  out.meta["sample_idx"] = std::to_string(index);
  out.meta["frame_id"] = f.id;
  out.meta["gt_types"] = types_to_meta(f.objects);
  out.meta["classes"] = class_list_;
  return out;
}

namespace {

data::KittiDataset open_frames(const config::Config& cfg) {
  const std::string root = cfg.get<std::string>("data_root");
  const std::string pts = cfg.get<std::string>("data_prefix.pts");
  if (pts != "training/velodyne") {
    throw config::ConfigError(cfg.origin("data_prefix.pts"), cfg.path() + ".data_prefix.pts",
                              "only the KITTI layout's training/velodyne is supported");
  }
  try {
    return data::KittiDataset(root, cfg.get<std::string>("split"),
                              cfg.get<std::vector<std::string>>("metainfo.classes"));
  } catch (const config::ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(cfg.path() + " (" + cfg.origin("data_root") + "): " + e.what());
  }
}

std::shared_ptr<engine::Dataset> build(const config::Config& cfg) {
  DetectionPipeline pipeline = DetectionPipeline::from_config(cfg);
  const bool test_mode = cfg.get<bool>("test_mode");
  if (!test_mode && !pipeline.with_annotations()) {
    throw config::ConfigError(cfg.origin("pipeline"), cfg.path() + ".pipeline",
                              "a training dataset needs LoadAnnotations3D in its pipeline");
  }
  return std::make_shared<KittiDetectionDataset>(open_frames(cfg), std::move(pipeline), test_mode);
}

std::string describe(const data::SynthKittiOptions& o) {
  std::ostringstream s;
  s << "scenes=" << o.scenes << " seed=" << o.seed << " val_fraction=" << o.val_fraction
    << " max_object_distance=" << o.scene.max_object_distance
    << " max_object_lateral=" << o.scene.max_object_lateral;
  return s.str();
}

}  // namespace

std::shared_ptr<engine::Dataset> make_kitti_dataset(const config::Config& cfg) {
  return build(cfg);
}

void ensure_synthetic_kitti(const std::string& root, const data::SynthKittiOptions& options) {
  const fs::path dir(root);
  const std::string want = describe(options);
  const fs::path stamp = dir / "ddp3d_synthetic.txt";
  auto check_stamp = [&] {
    std::string got = io::read_regular_file(stamp, 64 * io::kKiB, "synthetic dataset stamp");
    got = got.substr(0, got.find('\n'));
    if (got != want) {
      throw std::runtime_error(root + " holds a synthetic dataset made with '" + got +
                               "', but the config asks for '" + want +
                               "': delete the folder or change data_root");
    }
  };
  if (fs::exists(stamp)) return check_stamp();
  if (fs::exists(dir / "ImageSets")) return;  // a dataset put there by hand: used as it is

  // Write next to the target and rename: a reader never sees a half-written dataset, and of
  // several ranks writing at once one rename wins and the others discard their copy.
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
  // Random, not the pid: ranks in other pods on one shared volume have the same pids.
  const fs::path tmp = root + ".tmp-" + random_hex(6, "a temporary folder name");
  fs::remove_all(tmp);
  log::info("writing a synthetic KITTI dataset (" + want + ") to " + root);
  const data::SynthKittiStats stats = data::write_synthetic_kitti(tmp.string(), options);
  io::write_file_atomically(tmp / "ddp3d_synthetic.txt", want + "\n");
  std::error_code ec;
  fs::rename(tmp, dir, ec);
  if (ec) {
    fs::remove_all(tmp);
    if (!fs::exists(stamp)) {
      throw std::runtime_error("could not move the synthetic dataset into " + root + ": " +
                               ec.message());
    }
    return check_stamp();
  }
  log::info("wrote " + std::to_string(stats.scenes) + " scenes (" + std::to_string(stats.cars) +
            " cars, " + std::to_string(stats.pedestrians) + " pedestrians, " +
            std::to_string(stats.cyclists) + " cyclists) to " + root);
}

std::shared_ptr<engine::Dataset> make_synthetic_kitti_dataset(const config::Config& cfg) {
  data::SynthKittiOptions o;
  o.scenes = cfg.get<int>("num_scenes");
  o.seed = static_cast<std::uint64_t>(cfg.get<std::int64_t>("seed"));
  o.val_fraction = cfg.get<double>("val_fraction");
  o.scene.max_object_distance = cfg.get<double>("max_object_distance");
  o.scene.max_object_lateral = cfg.get<double>("max_object_lateral");
  try {
    ensure_synthetic_kitti(cfg.get<std::string>("data_root"), o);
  } catch (const std::exception& e) {
    throw std::runtime_error(cfg.path() + ".data_root (" + cfg.origin("data_root") +
                             "): " + e.what());
  }
  return build(cfg);
}

}  // namespace ddp3d::detection
