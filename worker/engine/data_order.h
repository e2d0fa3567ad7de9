// Which samples a rank reads in an epoch and the seed each draws its augmentation from: pure
// functions of (seed, epoch, index, world sizes), so runs and resumes repeat exactly whatever
// the thread schedule.
//
// Training data order (constant global batch): epoch e's stream is the permutation
// dist::DistributedSampler draws for seed + e, padded by wrapping (or, with drop_last,
// truncated) to a multiple of the batch world size — what DistributedSampler does at that
// world size. Iteration i consumes the stream's positions [i*G, min((i+1)*G, T)) where G is the
// global batch (batch world size × batch_size) and T the stream's length; within it, rank r of
// W takes the positions p with (p - i*G) % W == r, in order. At W == batch world size this is
// DistributedSampler's order (rank r takes every W-th index) in batches of batch_size; at a
// smaller W a rank takes more samples per iteration and trains them in micro-batches.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "worker/engine/run_context.h"

namespace ddp3d::engine {

// Seeds for the data. index >= 0: the generator sample `index` in `epoch` draws its augmentation
// from, the same on every rank and at every world size (`rank` is ignored). index -1: the
// epoch's global RNG of `rank` (e.g. dropout).
std::uint64_t data_seed(std::uint64_t seed, int rank, std::int64_t epoch, std::int64_t index);

// This rank's sample indices for `epoch` (dist::DistributedSampler semantics at ctx.world_size;
// evaluation).
std::vector<std::int64_t> epoch_indices(std::int64_t dataset_size, const RunContext& ctx,
                                        bool shuffle, std::uint64_t seed, std::int64_t epoch,
                                        bool drop_last);

// How the training data of an epoch is cut into iterations, ranks and micro-batches.
struct TrainDataOrder {
  std::int64_t dataset_size = 0;
  std::int64_t batch_size = 1;  // train_dataloader.batch_size (per rank at the batch world size)
  int batch_world_size = 1;     // the world size the global batch is defined at
  bool shuffle = true;
  std::uint64_t seed = 0;  // the sampler's seed (the epoch is added to it)
  bool drop_last = false;

  std::int64_t global_batch() const { return batch_size * batch_world_size; }
  // Length T of an epoch's stream: the dataset padded (or truncated) to a multiple of
  // batch_world_size.
  std::int64_t stream_size() const;
  // Samples of iteration `iter` over all ranks: the global batch, less in an epoch's last.
  std::int64_t iteration_size(std::int64_t iter) const {
    return std::min((iter + 1) * global_batch(), stream_size()) - iter * global_batch();
  }
  // ceil(T / G), or floor with drop_last; independent of the actual world size. Throws
  // std::invalid_argument naming train_dataloader when it is 0.
  std::int64_t iters_per_epoch() const;
};

// The epoch's stream of sample indices (length order.stream_size()).
std::vector<std::int64_t> epoch_stream(const TrainDataOrder& order, std::int64_t epoch);

// The positions of iteration `iter` of an epoch's stream that `rank` of `world_size` trains, in
// increasing order. Throws std::invalid_argument when world_size > batch_world_size (naming
// DDP3D_BATCH_WORLD_SIZE), or for a rank or iteration out of range.
std::vector<std::int64_t> iteration_positions(const TrainDataOrder& order, std::int64_t iter,
                                              int rank, int world_size);

// Sizes of the micro-batches a rank trains `samples` (its share of an iteration of
// `iteration_samples` samples over `world_size` ranks) in: as few as the largest share needs
// at batch_size each (so every rank runs the same number when batch_size > 1), near equal, in
// order. One micro-batch of all `samples` when they fit in batch_size.
std::vector<std::int64_t> micro_batch_sizes(std::int64_t samples, std::int64_t iteration_samples,
                                            int world_size, std::int64_t batch_size);

// This rank's micro-batches of sample indices for every iteration of `epoch` from
// `first_iter` on: result[k] holds iteration first_iter + k's micro-batches.
std::vector<std::vector<std::vector<std::int64_t>>> epoch_micro_batches(
    const TrainDataOrder& order, std::int64_t epoch, int rank, int world_size,
    std::int64_t first_iter = 0);

// The world size the global batch is defined at: ctx.batch_world_size, or ctx.world_size when
// unset. Throws std::invalid_argument naming DDP3D_BATCH_WORLD_SIZE when the world size is
// larger.
int batch_world_size(const RunContext& ctx);

// Training iterations per epoch (every rank gets the same number, at any world size up to the
// batch world size). Throws std::invalid_argument naming train_dataloader when an epoch holds
// no batch.
std::int64_t train_iters_per_epoch(std::int64_t dataset_size, const RunContext& ctx,
                                   std::int64_t batch_size, bool drop_last);

// Batches of `batch_size` in this rank's shard of an unshuffled, padded pass (evaluation).
std::int64_t eval_iters(std::int64_t dataset_size, const RunContext& ctx, std::int64_t batch_size);

}  // namespace ddp3d::engine
