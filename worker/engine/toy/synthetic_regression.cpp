#include "worker/engine/toy/synthetic_regression.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>
#include <string>

namespace ddp3d::engine {
namespace {

constexpr std::int64_t kHidden = 16;

at::Generator generator(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

}  // namespace

SyntheticRegression::SyntheticRegression(const SyntheticRegressionOptions& options)
    : options_(options) {
  if (options.num_samples <= 0 || options.in_dim <= 0 || options.out_dim <= 0) {
    throw std::invalid_argument("SyntheticRegression: num_samples, in_dim and out_dim must be > 0");
  }
  at::Generator g = generator(options.seed);
  w1_ = at::randn({options.in_dim, kHidden}, g) / std::sqrt(static_cast<double>(options.in_dim));
  w2_ = at::randn({kHidden, options.out_dim}, g) / std::sqrt(static_cast<double>(kHidden));
}

Sample SyntheticRegression::get(std::int64_t index, at::Generator& /*rng*/) const {
  if (index < 0 || index >= options_.num_samples) {
    throw std::out_of_range("SyntheticRegression: index " + std::to_string(index) +
                            " outside [0, " + std::to_string(options_.num_samples) + ")");
  }
  // A per-sample stream: sample i is the same whatever order or thread reads it.
  at::Generator g =
      generator(options_.seed * 1000003ULL + static_cast<std::uint64_t>(index) + 1ULL);
  const at::Tensor x = at::randn({options_.in_dim}, g);
  const at::Tensor clean = at::matmul(at::tanh(at::matmul(x, w1_)), w2_);
  const at::Tensor y = clean + options_.noise * at::randn({options_.out_dim}, g);
  Sample s;
  s.tensors["inputs"] = x;
  s.tensors["targets"] = y;
  s.meta["sample_idx"] = std::to_string(index);
  return s;
}

}  // namespace ddp3d::engine
