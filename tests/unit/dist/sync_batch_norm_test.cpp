// SyncBatchNorm in one process: as a module without a group it is torch::nn::BatchNorm, and its
// synchronised autograd function with a one-rank all-reduce (the identity) reproduces
// BatchNorm's output, running statistics and gradients. The multi-rank behaviour is tested with
// real processes in tests/dist/sync_batch_norm.
#include "worker/dist/sync_batch_norm.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>

#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include "worker/dist/default_process_group.h"
#include "worker/dist/sync_batch_norm_function.h"

namespace ddp3d::dist {
namespace {

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

// Random input [shape] with a different mean and scale per channel (dimension 1).
at::Tensor channel_input(std::vector<int64_t> shape, at::ScalarType dtype, double offset = 0.5) {
  const int64_t c = shape[1];
  std::vector<int64_t> bshape(shape.size(), 1);
  bshape[1] = c;
  const at::Tensor mean = at::arange(c, at::kDouble).mul(offset).view(bshape);
  const at::Tensor scale = (at::arange(c, at::kDouble) * 0.3 + 0.7).view(bshape);
  return (at::randn(shape, at::kDouble) * scale + mean).to(dtype);
}

struct Result {
  at::Tensor out, grad_input, grad_weight, grad_bias, running_mean, running_var;
};

// Two training steps (so the running statistics compound) and a backward of sum(out * dy).
template <typename Forward>
Result two_steps(Forward forward, const at::Tensor& x, const at::Tensor& dy,
                 const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& running_mean,
                 const at::Tensor& running_var) {
  forward(x * 0.5 + 1.0);
  const at::Tensor input = x.clone().requires_grad_(true);
  const at::Tensor out = forward(input);
  (out * dy).sum().backward();
  return {out.detach(), input.grad(),         weight.grad(),
          bias.grad(),  running_mean.clone(), running_var.clone()};
}

void expect_same(const Result& got, const Result& want, double tol) {
  const std::vector<std::pair<const char*, double>> diffs{
      {"out", max_diff(got.out, want.out)},
      {"grad_input", max_diff(got.grad_input, want.grad_input)},
      {"grad_weight", max_diff(got.grad_weight, want.grad_weight)},
      {"grad_bias", max_diff(got.grad_bias, want.grad_bias)},
      {"running_mean", max_diff(got.running_mean, want.running_mean)},
      {"running_var", max_diff(got.running_var, want.running_var)}};
  std::cout << "max abs diff vs BatchNorm (" << got.out.sizes() << " " << got.out.scalar_type()
            << "):";
  for (const auto& [name, d] : diffs) {
    std::cout << " " << name << " " << d;
    EXPECT_LT(d, tol) << name;
  }
  std::cout << "\n";
}

torch::nn::BatchNormOptions bn_options(int64_t c, std::optional<double> momentum = 0.01) {
  return torch::nn::BatchNormOptions(c).eps(1e-3).momentum(momentum);
}

// Gives BN and SyncBN the same random affine parameters.
void randomise(at::Tensor weight, at::Tensor bias) {
  at::NoGradGuard no_grad;
  weight.copy_(at::rand_like(weight) + 0.5);
  bias.copy_(at::randn_like(bias));
}

template <typename BatchNorm>
void check_module_matches(BatchNorm bn, std::vector<int64_t> shape,
                          std::optional<double> momentum) {
  const int64_t c = shape[1];
  bn->options.momentum(momentum);
  SyncBatchNorm sync(bn_options(c, momentum));
  randomise(bn->weight, bn->bias);
  {
    at::NoGradGuard no_grad;
    sync->weight.copy_(bn->weight);
    sync->bias.copy_(bn->bias);
  }
  const at::Tensor x = channel_input(shape, at::kFloat);
  const at::Tensor dy = at::randn(shape);
  const Result want = two_steps([&](const at::Tensor& t) { return bn->forward(t); }, x, dy,
                                bn->weight, bn->bias, bn->running_mean, bn->running_var);
  const Result got = two_steps([&](const at::Tensor& t) { return sync->forward(t); }, x, dy,
                               sync->weight, sync->bias, sync->running_mean, sync->running_var);
  expect_same(got, want, 1e-6);
  EXPECT_EQ(sync->num_batches_tracked.item<int64_t>(), 2);
  EXPECT_EQ(bn->num_batches_tracked.template item<int64_t>(), 2);

  // Eval mode normalises with the running statistics, as BatchNorm does.
  bn->eval();
  sync->eval();
  EXPECT_LT(max_diff(sync->forward(x), bn->forward(x)), 1e-6);
  EXPECT_EQ(sync->num_batches_tracked.item<int64_t>(), 2);
}

TEST(SyncBatchNormModule, WithoutGroupIsBatchNorm2d) {
  ASSERT_EQ(default_process_group(), nullptr);
  at::manual_seed(1);
  check_module_matches(torch::nn::BatchNorm2d(bn_options(5)), {6, 5, 4, 3}, 0.01);
}

TEST(SyncBatchNormModule, WithoutGroupIsBatchNorm1dOnNCAndNCL) {
  at::manual_seed(2);
  check_module_matches(torch::nn::BatchNorm1d(bn_options(7)), {40, 7}, 0.1);
  check_module_matches(torch::nn::BatchNorm1d(bn_options(3)), {5, 3, 6}, 0.1);
}

TEST(SyncBatchNormModule, CumulativeAverageWhenMomentumIsNone) {
  at::manual_seed(3);
  check_module_matches(torch::nn::BatchNorm2d(bn_options(4)), {3, 4, 5, 5}, std::nullopt);
}

TEST(SyncBatchNormModule, HasBatchNormsParameterAndBufferNames) {
  // Checkpoints written with BN load into SyncBN and back.
  torch::nn::BatchNorm2d bn(bn_options(6));
  SyncBatchNorm sync(bn_options(6));
  EXPECT_EQ(sync->named_parameters().keys(), bn->named_parameters().keys());
  EXPECT_EQ(sync->named_buffers().keys(), bn->named_buffers().keys());
  for (const auto& p : bn->named_buffers()) {
    EXPECT_EQ(sync->named_buffers()[p.key()].sizes(), p.value().sizes()) << p.key();
    EXPECT_EQ(sync->named_buffers()[p.key()].scalar_type(), p.value().scalar_type()) << p.key();
  }
}

TEST(SyncBatchNormModule, RejectsWrongChannelCount) {
  SyncBatchNorm sync(bn_options(4));
  EXPECT_THROW(sync->forward(at::randn({3, 5, 2})), c10::Error);
  EXPECT_THROW(sync->forward(at::randn({3})), c10::Error);
}

// The synchronised path itself (the custom autograd function) with one rank: its own maths
// against BatchNorm's kernels.
Result function_result(const at::Tensor& x, const at::Tensor& dy, double momentum,
                       const at::Tensor& weight0, const at::Tensor& bias0, int* reduces) {
  const int64_t c = x.size(1);
  const at::Tensor weight = weight0.clone().requires_grad_(true);
  const at::Tensor bias = bias0.clone().requires_grad_(true);
  const at::Tensor rm = at::zeros({c}, x.options());
  const at::Tensor rv = at::ones({c}, x.options());
  auto identity = [reduces](at::Tensor&) { ++*reduces; };
  auto forward = [&](const at::Tensor& t) {
    return sync_batch_norm(t, weight, bias, rm, rv, momentum, 1e-3, identity);
  };
  return two_steps(forward, x, dy, weight, bias, rm, rv);
}

Result batch_norm_result(const at::Tensor& x, const at::Tensor& dy, double momentum,
                         const at::Tensor& weight0, const at::Tensor& bias0) {
  torch::nn::BatchNorm1d bn(bn_options(x.size(1), momentum));
  bn->to(x.scalar_type());
  {
    at::NoGradGuard no_grad;
    bn->weight.copy_(weight0);
    bn->bias.copy_(bias0);
  }
  auto forward = [&](const at::Tensor& t) {
    // BatchNorm1d checks for 2-3 dimensions; the functional form takes any.
    return torch::nn::functional::detail::batch_norm(t, bn->running_mean, bn->running_var,
                                                     bn->weight, bn->bias, true, momentum, 1e-3);
  };
  return two_steps(forward, x, dy, bn->weight, bn->bias, bn->running_mean, bn->running_var);
}

void check_function(std::vector<int64_t> shape, at::ScalarType dtype, double tol,
                    double offset = 0.5, bool constant_channel = false) {
  at::Tensor x = channel_input(shape, dtype, offset);
  if (constant_channel) x.select(1, 0).fill_(3.0);
  const at::Tensor dy = at::randn(shape, at::TensorOptions(dtype));
  const at::Tensor weight = at::rand({shape[1]}, at::TensorOptions(dtype)) + 0.5;
  const at::Tensor bias = at::randn({shape[1]}, at::TensorOptions(dtype));
  int reduces = 0;
  const Result got = function_result(x, dy, 0.1, weight, bias, &reduces);
  const Result want = batch_norm_result(x, dy, 0.1, weight, bias);
  expect_same(got, want, tol);
  // Two forwards (one collective each) and one backward (one collective).
  EXPECT_EQ(reduces, 3);
}

TEST(SyncBatchNormFunction, OneRankMatchesBatchNormFloat) {
  at::manual_seed(4);
  check_function({16, 6}, at::kFloat, 1e-5);
  check_function({4, 3, 10}, at::kFloat, 1e-5);
  check_function({4, 5, 6, 7}, at::kFloat, 1e-5);
}

TEST(SyncBatchNormFunction, OneRankMatchesBatchNormDoubleTightly) {
  at::manual_seed(5);
  check_function({4, 5, 6, 7}, at::kDouble, 1e-12);
}

TEST(SyncBatchNormFunction, LargeMeanAgainstSpreadKeepsPrecision) {
  // Channel means up to 300 with unit-ish spread: float sums of x² would lose the variance.
  at::manual_seed(6);
  check_function({8, 4, 8, 8}, at::kFloat, 5e-5, /*offset=*/100.0);
}

TEST(SyncBatchNormFunction, ConstantChannelHasZeroVariance) {
  // e.g. a channel that ReLU zeroed on this rank: variance 0, output = bias.
  at::manual_seed(8);
  check_function({6, 3, 5}, at::kFloat, 1e-5, 0.5, /*constant_channel=*/true);
  check_function({1, 3, 5, 5}, at::kFloat, 1e-5, 0.5, /*constant_channel=*/true);
}

TEST(SyncBatchNormFunction, ReducedPrecisionInputUsesFloatStatistics) {
  // bfloat16 activations (mixed precision) with float parameters and statistics, as BatchNorm.
  at::manual_seed(9);
  const at::Tensor x = channel_input({4, 3, 6, 6}, at::kFloat, 2.0);
  const at::Tensor dy = at::randn({4, 3, 6, 6});
  auto identity = [](at::Tensor&) {};
  const at::Tensor w0 = at::rand({3}) + 0.5;
  const at::Tensor b0 = at::randn({3});
  auto run = [&](at::ScalarType dtype, at::Tensor& running_mean) {
    const at::Tensor w = w0.clone().requires_grad_(true);
    const at::Tensor b = b0.clone().requires_grad_(true);
    const at::Tensor in = x.to(dtype).requires_grad_(true);
    const at::Tensor rv = at::ones({3});
    const at::Tensor out = sync_batch_norm(in, w, b, running_mean, rv, 0.5, 1e-3, identity);
    EXPECT_EQ(out.scalar_type(), dtype);
    (out * dy.to(dtype)).sum().backward();
    EXPECT_EQ(in.grad().scalar_type(), dtype);
    EXPECT_EQ(w.grad().scalar_type(), at::kFloat);
    return std::vector<at::Tensor>{out, in.grad(), w.grad(), b.grad()};
  };
  at::Tensor rm_bf16 = at::zeros({3});
  at::Tensor rm_float = at::zeros({3});
  const auto low = run(at::kBFloat16, rm_bf16);
  const auto ref = run(at::kFloat, rm_float);
  std::cout << "bfloat16 vs float: out " << max_diff(low[0], ref[0]) << " grad_input "
            << max_diff(low[1], ref[1]) << " grad_weight " << max_diff(low[2], ref[2])
            << " grad_bias " << max_diff(low[3], ref[3]) << " running_mean "
            << max_diff(rm_bf16, rm_float) << "\n";
  // bfloat16 keeps 8 bits: the input itself is rounded by up to 2^-8 relative.
  EXPECT_LT(max_diff(low[0], ref[0]), 0.05);
  EXPECT_LT(max_diff(low[1], ref[1]), 0.08);
  EXPECT_LT(max_diff(low[2], ref[2]), 0.15);  // sums over 144 values per channel
  EXPECT_LT(max_diff(low[3], ref[3]), 0.1);
  EXPECT_LT(max_diff(rm_bf16, rm_float), 0.005);
}

TEST(SyncBatchNormFunction, WithoutWeightOrBias) {
  // affine=false (neither), and either one alone: the gradients land on the right arguments.
  at::manual_seed(7);
  const at::Tensor x = channel_input({6, 3, 4}, at::kFloat);
  const at::Tensor dy = at::randn({6, 3, 4});
  const at::Tensor w0 = at::rand({3}) + 0.5;
  const at::Tensor b0 = at::randn({3});
  auto identity = [](at::Tensor&) {};
  for (const bool with_weight : {false, true}) {
    for (const bool with_bias : {false, true}) {
      const at::Tensor w = with_weight ? w0.clone().requires_grad_(true) : at::Tensor();
      const at::Tensor b = with_bias ? b0.clone().requires_grad_(true) : at::Tensor();
      const at::Tensor in = x.clone().requires_grad_(true);
      (sync_batch_norm(in, w, b, {}, {}, 0.1, 1e-3, identity) * dy).sum().backward();
      const at::Tensor rw = with_weight ? w0.clone().requires_grad_(true) : at::Tensor();
      const at::Tensor rb = with_bias ? b0.clone().requires_grad_(true) : at::Tensor();
      const at::Tensor rin = x.clone().requires_grad_(true);
      (torch::nn::functional::detail::batch_norm(rin, {}, {}, rw, rb, true, 0.1, 1e-3) * dy)
          .sum()
          .backward();
      EXPECT_LT(max_diff(in.grad(), rin.grad()), 1e-5) << with_weight << with_bias;
      if (with_weight) {
        EXPECT_LT(max_diff(w.grad(), rw.grad()), 1e-5);
      }
      if (with_bias) {
        EXPECT_LT(max_diff(b.grad(), rb.grad()), 1e-5);
      }
    }
  }
}

TEST(SyncBatchNormFunction, OneValuePerChannelIsAnError) {
  const at::Tensor w = at::ones({3});
  const at::Tensor b = at::zeros({3});
  auto identity = [](at::Tensor&) {};
  EXPECT_THROW(sync_batch_norm(at::randn({1, 3}), w, b, {}, {}, 0.1, 1e-5, identity), c10::Error);
  // An empty local batch is fine as long as the global batch is not: here the "group" adds two
  // values per channel from elsewhere.
  auto others = [](at::Tensor& t) {
    const int64_t c = (t.numel() - 1) / 2;
    if (t.numel() % 2 == 1) {  // forward statistics [sum, sum of squares, count]
      t.narrow(0, 0, c).add_(1.0);
      t.narrow(0, c, c).add_(5.0);
      t.narrow(0, 2 * c, 1).add_(2.0);
    }
  };
  const at::Tensor empty = at::zeros({0, 3}).requires_grad_(true);
  const at::Tensor y = sync_batch_norm(empty, w, b, {}, {}, 0.1, 1e-5, others);
  EXPECT_EQ(y.sizes(), empty.sizes());
  y.sum().backward();
  EXPECT_EQ(empty.grad().sizes(), empty.sizes());
}

TEST(DefaultProcessGroup, GuardSetsAndRestores) {
  EXPECT_EQ(default_process_group(), nullptr);
  // Only the pointer is stored; the guard never dereferences it.
  alignas(8) char storage[8];
  auto* fake = reinterpret_cast<ProcessGroup*>(storage);
  {
    DefaultProcessGroupGuard guard(fake);
    EXPECT_EQ(default_process_group(), fake);
    SyncBatchNorm sync(bn_options(2));
    EXPECT_EQ(sync->group(), fake);
    {
      DefaultProcessGroupGuard inner(nullptr);
      EXPECT_EQ(default_process_group(), nullptr);
      EXPECT_EQ(sync->group(), nullptr);
    }
    EXPECT_EQ(default_process_group(), fake);
  }
  EXPECT_EQ(default_process_group(), nullptr);
}

}  // namespace
}  // namespace ddp3d::dist
