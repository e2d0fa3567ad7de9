#include "worker/detection/browse_dataset.h"

#include <stdexcept>

#include "worker/detection/kitti_detection_dataset.h"
#include "worker/detection/repeat_dataset.h"

namespace ddp3d::detection {

const std::set<std::string>& random_transform_types() {
  static const std::set<std::string> types = {"ObjectSample", "ObjectNoise", "RandomFlip3D",
                                              "GlobalRotScaleTrans", "PointShuffle"};
  return types;
}

std::shared_ptr<const engine::Dataset> browsable_dataset(
    const std::shared_ptr<const engine::Dataset>& train, bool augmented) {
  std::shared_ptr<const engine::Dataset> inner = train;
  while (const auto* repeat = dynamic_cast<const RepeatDataset*>(inner.get()))
    inner = repeat->inner();
  const auto* kitti = dynamic_cast<const KittiDetectionDataset*>(inner.get());
  if (kitti == nullptr) {
    throw std::invalid_argument(
        "train_dataloader.dataset holds no KITTI detection dataset (KittiDataset or "
        "SyntheticKitti): nothing to draw");
  }
  if (augmented) return inner;
  return std::make_shared<KittiDetectionDataset>(
      kitti->frames(), kitti->pipeline().without(random_transform_types()), false);
}

}  // namespace ddp3d::detection
