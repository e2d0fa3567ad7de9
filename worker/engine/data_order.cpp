#include "worker/engine/data_order.h"

#include <stdexcept>
#include <string>

#include "worker/dist/distributed_sampler.h"

namespace ddp3d::engine {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64 step: decorrelates nearby (seed, rank, epoch, index) tuples.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

std::uint64_t data_seed(std::uint64_t seed, int rank, std::int64_t epoch, std::int64_t index) {
  return mix(
      mix(mix(mix(0, seed), static_cast<std::uint64_t>(rank)), static_cast<std::uint64_t>(epoch)),
      static_cast<std::uint64_t>(index));
}

std::vector<std::int64_t> epoch_indices(std::int64_t dataset_size, const RunContext& ctx,
                                        bool shuffle, std::uint64_t seed, std::int64_t epoch,
                                        bool drop_last) {
  dist::DistributedSampler sampler(dataset_size,
                                   {ctx.world_size, ctx.rank, shuffle, seed, drop_last});
  sampler.set_epoch(epoch);
  return sampler.indices();
}

std::int64_t train_iters_per_epoch(std::int64_t dataset_size, const RunContext& ctx,
                                   std::int64_t batch_size, bool drop_last) {
  const auto per_rank =
      static_cast<std::int64_t>(epoch_indices(dataset_size, ctx, false, 0, 0, drop_last).size());
  const std::int64_t iters =
      drop_last ? per_rank / batch_size : (per_rank + batch_size - 1) / batch_size;
  if (iters < 1) {
    throw std::invalid_argument("train_dataloader: no full batch per rank (dataset " +
                                std::to_string(dataset_size) + " samples, world size " +
                                std::to_string(ctx.world_size) + ", batch_size " +
                                std::to_string(batch_size) + ")");
  }
  return iters;
}

std::int64_t eval_iters(std::int64_t dataset_size, const RunContext& ctx, std::int64_t batch_size) {
  const auto per_rank =
      static_cast<std::int64_t>(epoch_indices(dataset_size, ctx, false, 0, 0, false).size());
  return (per_rank + batch_size - 1) / batch_size;
}

}  // namespace ddp3d::engine
