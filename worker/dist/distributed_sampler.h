// DistributedSampler: which dataset indices one rank visits in an epoch, with the semantics
// of torch.utils.data.DistributedSampler (and, with shuffling, the same permutation: it uses
// LibTorch's randperm seeded with seed + epoch, so a PyTorch run over the same data visits the
// same samples in the same order).
//
//   DistributedSampler sampler(dataset.size(), {.num_replicas = ws, .rank = r, .seed = 42});
//   for (epoch ...) { sampler.set_epoch(epoch); for (auto i : sampler.indices()) ... }
//
// Every rank gets num_samples() indices. Without drop_last the index list is padded by
// repeating it from the start so it divides evenly; with drop_last the tail is dropped.
// Rank r takes positions r, r + num_replicas, r + 2*num_replicas, ... of the (shuffled,
// padded) list, so the ranks' shards are disjoint (up to the padding) and cover the data.
#pragma once

#include <cstdint>
#include <vector>

namespace ddp3d::dist {

struct DistributedSamplerOptions {
  int num_replicas = 1;
  int rank = 0;
  bool shuffle = true;
  std::uint64_t seed = 0;
  bool drop_last = false;
};

class DistributedSampler {
 public:
  // Throws std::invalid_argument for a negative dataset_size, num_replicas < 1 or rank
  // outside [0, num_replicas). (drop_last with fewer samples than replicas gives 0 samples.)
  DistributedSampler(std::int64_t dataset_size, DistributedSamplerOptions options);

  // Changes the shuffle for the next indices() call; all ranks must use the same epoch.
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }
  std::int64_t epoch() const { return epoch_; }

  // This rank's indices for the current epoch (num_samples() of them).
  std::vector<std::int64_t> indices() const;
  std::int64_t num_samples() const { return num_samples_; }
  std::int64_t total_size() const { return num_samples_ * options_.num_replicas; }
  std::int64_t dataset_size() const { return dataset_size_; }
  const DistributedSamplerOptions& options() const { return options_; }

 private:
  std::int64_t dataset_size_;
  DistributedSamplerOptions options_;
  std::int64_t epoch_ = 0;
  std::int64_t num_samples_;
};

}  // namespace ddp3d::dist
