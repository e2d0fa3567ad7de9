#include "worker/engine/data_order.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

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

void check_world_size(int world_size, int batch_world_size) {
  if (world_size > batch_world_size) {
    throw std::invalid_argument(
        "world size " + std::to_string(world_size) + " is larger than the batch world size " +
        std::to_string(batch_world_size) +
        " (DDP3D_BATCH_WORLD_SIZE): the global batch is defined at the batch world size and a "
        "run may shrink below it, not grow past it");
  }
}

}  // namespace

std::uint64_t data_seed(std::uint64_t seed, int rank, std::int64_t epoch, std::int64_t index) {
  // A sample's seed mixes in rank 0 whoever reads it: it is augmented alike at any world size.
  const int owner = index >= 0 ? 0 : rank;
  return mix(
      mix(mix(mix(0, seed), static_cast<std::uint64_t>(owner)), static_cast<std::uint64_t>(epoch)),
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

std::int64_t TrainDataOrder::stream_size() const {
  const std::int64_t r = batch_world_size;
  return drop_last ? dataset_size / r * r : (dataset_size + r - 1) / r * r;
}

std::int64_t TrainDataOrder::iters_per_epoch() const {
  if (batch_size < 1 || batch_world_size < 1) {
    throw std::invalid_argument(
        "train_dataloader: batch_size and the batch world size must be "
        ">= 1");
  }
  const std::int64_t t = stream_size();
  const std::int64_t g = global_batch();
  const std::int64_t iters = drop_last ? t / g : (t + g - 1) / g;
  if (iters < 1) {
    throw std::invalid_argument("train_dataloader: no full batch per rank (dataset " +
                                std::to_string(dataset_size) + " samples, batch world size " +
                                std::to_string(batch_world_size) + ", batch_size " +
                                std::to_string(batch_size) + ")");
  }
  return iters;
}

std::vector<std::int64_t> epoch_stream(const TrainDataOrder& order, std::int64_t epoch) {
  const std::int64_t n = order.dataset_size;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  if (order.shuffle && n > 0) {
    // dist::DistributedSampler's permutation: torch's CPU generator seeded with seed + epoch.
    auto gen =
        at::make_generator<at::CPUGeneratorImpl>(order.seed + static_cast<std::uint64_t>(epoch));
    const auto p = at::randperm(n, gen, at::kLong);
    const auto* data = p.data_ptr<std::int64_t>();
    perm.assign(data, data + n);
  } else {
    for (std::int64_t i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  }
  const std::int64_t t = order.stream_size();
  std::vector<std::int64_t> stream(static_cast<std::size_t>(t));
  // Padding repeats from the start, as the sampler's does.
  for (std::int64_t k = 0; k < t; ++k)
    stream[static_cast<std::size_t>(k)] = perm[static_cast<std::size_t>(k % n)];
  return stream;
}

std::vector<std::int64_t> iteration_positions(const TrainDataOrder& order, std::int64_t iter,
                                              int rank, int world_size) {
  check_world_size(world_size, order.batch_world_size);
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw std::invalid_argument("iteration_positions: rank " + std::to_string(rank) +
                                " is outside [0, " + std::to_string(world_size) + ")");
  }
  const std::int64_t iters = order.iters_per_epoch();
  if (iter < 0 || iter >= iters) {
    throw std::invalid_argument("iteration_positions: iteration " + std::to_string(iter) +
                                " is outside [0, " + std::to_string(iters) + ")");
  }
  const std::int64_t a = iter * order.global_batch();
  const std::int64_t b = a + order.iteration_size(iter);
  std::vector<std::int64_t> out;
  for (std::int64_t p = a + rank; p < b; p += world_size) out.push_back(p);
  return out;
}

std::vector<std::int64_t> micro_batch_sizes(std::int64_t samples, std::int64_t iteration_samples,
                                            int world_size, std::int64_t batch_size) {
  if (samples <= 0) return {};
  const std::int64_t largest = (iteration_samples + world_size - 1) / world_size;
  const std::int64_t wanted = (std::max(largest, samples) + batch_size - 1) / batch_size;
  const std::int64_t count = std::min(wanted, samples);
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(count), samples / count);
  for (std::int64_t k = 0; k < samples % count; ++k) ++sizes[static_cast<std::size_t>(k)];
  return sizes;
}

std::vector<std::vector<std::vector<std::int64_t>>> epoch_micro_batches(const TrainDataOrder& order,
                                                                        std::int64_t epoch,
                                                                        int rank, int world_size,
                                                                        std::int64_t first_iter) {
  check_world_size(world_size, order.batch_world_size);
  const std::vector<std::int64_t> stream = epoch_stream(order, epoch);
  const std::int64_t iters = order.iters_per_epoch();
  std::vector<std::vector<std::vector<std::int64_t>>> out;
  for (std::int64_t i = std::max<std::int64_t>(first_iter, 0); i < iters; ++i) {
    const std::vector<std::int64_t> positions = iteration_positions(order, i, rank, world_size);
    const auto sizes = micro_batch_sizes(static_cast<std::int64_t>(positions.size()),
                                         order.iteration_size(i), world_size, order.batch_size);
    std::vector<std::vector<std::int64_t>> micro;
    std::size_t next = 0;
    for (const std::int64_t size : sizes) {
      std::vector<std::int64_t> indices;
      for (std::int64_t k = 0; k < size; ++k)
        indices.push_back(stream[static_cast<std::size_t>(positions[next++])]);
      micro.push_back(std::move(indices));
    }
    out.push_back(std::move(micro));
  }
  return out;
}

int batch_world_size(const RunContext& ctx) {
  const int bws = ctx.batch_world_size > 0 ? ctx.batch_world_size : ctx.world_size;
  check_world_size(ctx.world_size, bws);
  return bws;
}

std::int64_t train_iters_per_epoch(std::int64_t dataset_size, const RunContext& ctx,
                                   std::int64_t batch_size, bool drop_last) {
  TrainDataOrder order;
  order.dataset_size = dataset_size;
  order.batch_size = batch_size;
  order.batch_world_size = batch_world_size(ctx);
  order.drop_last = drop_last;
  return order.iters_per_epoch();
}

std::int64_t eval_iters(std::int64_t dataset_size, const RunContext& ctx, std::int64_t batch_size) {
  const auto per_rank =
      static_cast<std::int64_t>(epoch_indices(dataset_size, ctx, false, 0, 0, false).size());
  return (per_rank + batch_size - 1) / batch_size;
}

}  // namespace ddp3d::engine
