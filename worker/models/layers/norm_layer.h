// The normalisation layer a PointPillars part builds from its norm_cfg (mmcv's
// build_norm_layer): torch's BatchNorm1d/2d for 'BN*', ddp3d's SyncBatchNorm for 'SyncBN'
// (worker/dist/sync_batch_norm.h, same parameter and buffer names, so checkpoints are
// interchangeable). eps and momentum come from the config (PointPillars: 1e-3, 0.01).
#pragma once

#include <torch/nn/modules/container/any.h>

#include <cstdint>

#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

// `dims`: 1 for BatchNorm1d inputs ([N, C] or [N, C, L]), 2 for BatchNorm2d ([N, C, H, W]).
// SyncBatchNorm synchronises over the process-wide default group (set by the runner).
torch::nn::AnyModule build_norm_layer(const NormCfg& cfg, int64_t num_features, int dims);

}  // namespace ddp3d::models
