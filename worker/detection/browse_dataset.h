// The training data as the pipeline hands it to the model (`ddp3d data browse`, mmdet3d's
// browse_dataset.py): the detection dataset inside the train dataloader's wrappers, with its
// random augmentations or without them.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "worker/engine/dataset.h"

namespace ddp3d::detection {

// The transforms that change a frame at random (left out of the plain view).
const std::set<std::string>& random_transform_types();

// `train` as built from train_dataloader.dataset: the KITTI detection dataset inside any
// RepeatDataset, as it is (`augmented`) or with the random transforms removed from its
// pipeline (loading, range filters and packing stay). Throws std::invalid_argument naming
// the dataset type when it holds no KITTI detection dataset.
std::shared_ptr<const engine::Dataset> browsable_dataset(
    const std::shared_ptr<const engine::Dataset>& train, bool augmented);

}  // namespace ddp3d::detection
