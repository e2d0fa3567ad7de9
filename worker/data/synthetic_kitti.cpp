#include "worker/data/synthetic_kitti.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "common/io/atomic_file.h"
#include "worker/data/kitti_calib.h"
#include "worker/data/kitti_label.h"
#include "worker/data/point_cloud_file.h"

namespace ddp3d::data {

std::uint64_t scene_seed(std::uint64_t seed, int index) {
  // splitmix64 of the pair: neighbouring seeds give unrelated scenes.
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(index) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

SynthKittiStats write_synthetic_kitti(const std::string& out_dir, const SynthKittiOptions& options,
                                      const std::function<void(int)>& progress) {
  namespace fs = std::filesystem;
  if (options.scenes < 1 || options.scenes > kMaxSyntheticScenes) {
    throw std::invalid_argument("--scenes must be in [1, " + std::to_string(kMaxSyntheticScenes) +
                                "]");
  }
  // `!(a <= x)` also catches NaN.
  if (!(options.val_fraction >= 0) || !(options.val_fraction < 1)) {
    throw std::invalid_argument("--val-fraction must be in [0, 1)");
  }
  if (options.scene.beams < 1 || options.scene.beams > kMaxSyntheticBeams) {
    throw std::invalid_argument("--beams must be in [1, " + std::to_string(kMaxSyntheticBeams) +
                                "]");
  }
  if (!(options.scene.azimuth_step_deg >= kMinAzimuthStepDeg) ||
      !(options.scene.azimuth_step_deg <= kMaxAzimuthStepDeg)) {
    throw std::invalid_argument("--azimuth-step must be in [0.01, 45] degrees");
  }
  const fs::path root(out_dir);
  for (const char* sub : {"training/velodyne", "training/label_2", "training/calib", "ImageSets"}) {
    fs::create_directories(root / sub);
  }
  const KittiCalib calib = typical_kitti_calib();
  const std::string calib_text = format_kitti_calib(calib);
  SynthKittiStats stats;
  std::string train_ids, val_ids, all_ids;
  const int num_val = static_cast<int>(options.scenes * options.val_fraction);
  char id[16];
  for (int i = 0; i < options.scenes; ++i) {
    std::snprintf(id, sizeof(id), "%06d", i);
    const SyntheticScene scene = generate_scene(options.scene, scene_seed(options.seed, i));
    const at::Tensor points =
        at::from_blob(const_cast<float*>(scene.points.data()), {scene.num_points(), 4}, at::kFloat);
    write_velodyne((root / "training/velodyne" / (std::string(id) + ".bin")).string(), points);
    std::vector<KittiObject> labels;
    for (const auto& o : scene.objects) {
      KittiObject k = kitti_object_from_lidar_box(o.box, calib, o.type);
      k.occluded = o.occluded;
      labels.push_back(k);
      stats.cars += o.type == "Car";
      stats.pedestrians += o.type == "Pedestrian";
      stats.cyclists += o.type == "Cyclist";
    }
    io::write_file_atomically((root / "training/label_2" / (std::string(id) + ".txt")).string(),
                              format_kitti_labels(labels));
    io::write_file_atomically((root / "training/calib" / (std::string(id) + ".txt")).string(),
                              calib_text);
    (i < options.scenes - num_val ? train_ids : val_ids) += std::string(id) + "\n";
    all_ids += std::string(id) + "\n";
    stats.points += scene.num_points();
    ++stats.scenes;
    if (progress) progress(i + 1);
  }
  io::write_file_atomically((root / "ImageSets/train.txt").string(), train_ids);
  io::write_file_atomically((root / "ImageSets/val.txt").string(), val_ids);
  io::write_file_atomically((root / "ImageSets/trainval.txt").string(), all_ids);
  return stats;
}

}  // namespace ddp3d::data
