// SyntheticRegression: a deterministic regression problem generated from a seed.
// Sample i has inputs x_i ~ N(0, 1)^in_dim drawn from a generator seeded by (seed, i), and
// targets y_i = tanh(x_i W1) W2 + noise * e_i, with W1, W2 drawn once from `seed`: a smooth
// nonlinear function an MLP can learn, so a falling loss means training works. The same seed
// gives the same data on every rank and every run, with no files.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "worker/engine/dataset.h"

namespace ddp3d::engine {

struct SyntheticRegressionOptions {
  std::int64_t num_samples = 1024;
  std::int64_t in_dim = 8;  // config key in_features
  std::int64_t out_dim = 1;  // config key out_features
  double noise = 0.05;
  std::uint64_t seed = 0;
};

class SyntheticRegression : public Dataset {
 public:
  explicit SyntheticRegression(const SyntheticRegressionOptions& options);
  std::int64_t size() const override { return options_.num_samples; }
  // {"inputs": [in_dim], "targets": [out_dim]}, meta {"sample_idx"}. `rng` is unused: the data
  // has no augmentation, each sample is a pure function of (seed, index).
  Sample get(std::int64_t index, at::Generator& rng) const override;

 private:
  SyntheticRegressionOptions options_;
  at::Tensor w1_;  // [in_dim, hidden]
  at::Tensor w2_;  // [hidden, out_dim]
};

}  // namespace ddp3d::engine
