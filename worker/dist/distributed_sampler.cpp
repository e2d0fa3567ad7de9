#include "worker/dist/distributed_sampler.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>
#include <string>

namespace ddp3d::dist {

DistributedSampler::DistributedSampler(std::int64_t dataset_size, DistributedSamplerOptions options)
    : dataset_size_(dataset_size), options_(options) {
  if (dataset_size < 0) {
    throw std::invalid_argument("DistributedSampler: dataset_size must be >= 0, got " +
                                std::to_string(dataset_size));
  }
  if (options.num_replicas < 1) {
    throw std::invalid_argument("DistributedSampler: num_replicas must be >= 1, got " +
                                std::to_string(options.num_replicas));
  }
  if (options.rank < 0 || options.rank >= options.num_replicas) {
    throw std::invalid_argument("DistributedSampler: rank " + std::to_string(options.rank) +
                                " is outside [0, " + std::to_string(options.num_replicas) + ")");
  }
  const std::int64_t r = options.num_replicas;
  // As torch.utils.data.DistributedSampler: drop the tail that does not divide evenly, or
  // round up and pad.
  num_samples_ = options.drop_last ? dataset_size / r : (dataset_size + r - 1) / r;
}

std::vector<std::int64_t> DistributedSampler::indices() const {
  std::vector<std::int64_t> order(static_cast<std::size_t>(dataset_size_));
  if (options_.shuffle && dataset_size_ > 0) {
    // torch's CPU generator seeded with seed + epoch, and its randperm: the same permutation
    // as PyTorch's sampler, on every rank.
    auto gen = at::make_generator<at::CPUGeneratorImpl>(options_.seed +
                                                        static_cast<std::uint64_t>(epoch_));
    const auto perm = at::randperm(dataset_size_, gen, at::kLong);
    const auto* p = perm.data_ptr<std::int64_t>();
    order.assign(p, p + dataset_size_);
  } else {
    for (std::int64_t i = 0; i < dataset_size_; ++i) order[static_cast<std::size_t>(i)] = i;
  }
  const std::int64_t total = total_size();
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(num_samples_));
  // Position k of the padded list is order[k mod n]: padding repeats from the start.
  for (std::int64_t k = options_.rank; k < total; k += options_.num_replicas) {
    out.push_back(order[static_cast<std::size_t>(k % dataset_size_)]);
  }
  return out;
}

}  // namespace ddp3d::dist
