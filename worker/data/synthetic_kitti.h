// `ddp3d data synth-kitti`: writes synthetic scenes in the real KITTI object layout
//   OUT/training/{velodyne,label_2,calib}/NNNNNN.{bin,txt,txt}
//   OUT/ImageSets/{train,val,trainval}.txt
// so a real KITTI copy can replace it without changing a config. There are no images: the
// 2D boxes in the labels are the projections of the 3D boxes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "worker/data/synthetic_scene.h"

namespace ddp3d::data {

// Bounds of the options (frame ids have six digits; finer scans than 0.01 degree or more than
// 512 beams would only burn time and disk).
inline constexpr int kMaxSyntheticScenes = 999999;
inline constexpr int kMaxSyntheticBeams = 512;
inline constexpr double kMinAzimuthStepDeg = 0.01;
inline constexpr double kMaxAzimuthStepDeg = 45.0;

struct SynthKittiOptions {
  int scenes = 100;
  std::uint64_t seed = 0;
  double val_fraction = 0.2;  // the last scenes form the val split
  SceneOptions scene;
};

struct SynthKittiStats {
  int scenes = 0;
  std::int64_t points = 0;
  int cars = 0, pedestrians = 0, cyclists = 0;
};

// Scene i is generated from a seed derived from (seed, i), so any subset can be regenerated.
// Options outside the bounds above are std::invalid_argument.
SynthKittiStats write_synthetic_kitti(const std::string& out_dir, const SynthKittiOptions& options,
                                      const std::function<void(int done)>& progress = {});

std::uint64_t scene_seed(std::uint64_t seed, int index);

}  // namespace ddp3d::data
