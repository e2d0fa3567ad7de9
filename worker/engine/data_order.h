// Which samples a rank reads in an epoch and the seed each draws its augmentation from: pure
// functions of (seed, rank, world size, epoch, index), so runs and resumes repeat exactly
// whatever the thread schedule.
#pragma once

#include <cstdint>
#include <vector>

#include "worker/engine/run_context.h"

namespace ddp3d::engine {

// Seeds for the data: sample `index` in `epoch` on `rank` draws its augmentation from a
// generator seeded with this (index -1: the epoch's global RNG, e.g. dropout).
std::uint64_t data_seed(std::uint64_t seed, int rank, std::int64_t epoch, std::int64_t index);

// This rank's sample indices for `epoch` (dist::DistributedSampler semantics).
std::vector<std::int64_t> epoch_indices(std::int64_t dataset_size, const RunContext& ctx,
                                        bool shuffle, std::uint64_t seed, std::int64_t epoch,
                                        bool drop_last);

// Training iterations per epoch on each rank (every rank gets the same number). Throws
// std::invalid_argument naming train_dataloader when a rank would get no batch.
std::int64_t train_iters_per_epoch(std::int64_t dataset_size, const RunContext& ctx,
                                   std::int64_t batch_size, bool drop_last);

// Batches of `batch_size` in this rank's shard of an unshuffled, padded pass (evaluation).
std::int64_t eval_iters(std::int64_t dataset_size, const RunContext& ctx, std::int64_t batch_size);

}  // namespace ddp3d::engine
