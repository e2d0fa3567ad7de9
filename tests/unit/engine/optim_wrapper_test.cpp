// The optimizer wrappers on their own (one process, no DDP): accumulation divides each loss by
// its group's size and steps once per group, clipping bounds the update, AmpOptimWrapper's fp16
// loss scaling unscales before the step and skips a step on inf/NaN gradients, and schedule values
// reach the optimizer's param groups.
#include "worker/engine/optim_wrapper.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>
#include <torch/optim/sgd.h>

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "worker/engine/amp_optim_wrapper.h"
#include "worker/engine/model.h"

namespace ddp3d::engine {
namespace {

// One parameter w = 1; the loss of an iteration is c * w, so its gradient is c.
class Scalar : public Model {
 public:
  Scalar() { w = register_parameter("w", at::ones({1})); }
  LossMap forward_train(const Batch& /*batch*/) override { return {}; }
  std::vector<Sample> predict(const Batch& /*batch*/) override { return {}; }
  at::Tensor loss(double c) const { return (w * c).sum(); }
  double value() const { return w.item<double>(); }
  at::Tensor w;
};

OptimWrapperOptions sgd(double lr, std::int64_t counts, std::int64_t max_iters) {
  OptimWrapperOptions o;
  o.optimizer.type = "SGD";
  o.optimizer.lr = lr;
  o.accumulative_counts = counts;
  o.max_iters = max_iters;
  return o;
}

TEST(OptimWrapper, AccumulationStepsOncePerGroupOnTheMeanGradient) {
  Scalar m;
  OptimWrapper ow(m, sgd(0.1, 2, 4));
  const UpdateResult first = ow.update_params(m.loss(3), 0);
  EXPECT_FALSE(first.update_iter);
  EXPECT_FALSE(first.stepped);
  EXPECT_DOUBLE_EQ(m.value(), 1.0);
  EXPECT_FLOAT_EQ(m.w.grad().item<float>(), 1.5f);  // 3 / 2, kept for the group
  const UpdateResult second = ow.update_params(m.loss(5), 1);
  EXPECT_TRUE(second.update_iter);
  EXPECT_TRUE(second.stepped);
  EXPECT_FALSE(second.allreduce_wait_s.has_value());  // no DDP: nothing to wait for
  EXPECT_FLOAT_EQ(static_cast<float>(m.value()), 1.0f - 0.1f * 4.0f);      // (3 + 5) / 2
  EXPECT_FALSE(m.w.grad().defined() && m.w.grad().item<float>() != 0.0f);  // zeroed
}

TEST(OptimWrapper, AShortLastGroupIsDividedByItsOwnSize) {
  Scalar m;
  OptimWrapper ow(m, sgd(0.1, 3, 4));  // groups {0, 1, 2} and {3}
  EXPECT_TRUE(ow.is_update_iter(2));
  EXPECT_TRUE(ow.is_update_iter(3));
  for (std::int64_t i = 0; i < 3; ++i) ow.update_params(m.loss(3), i);
  EXPECT_FLOAT_EQ(static_cast<float>(m.value()), 1.0f - 0.1f * 3.0f);
  const UpdateResult last = ow.update_params(m.loss(2), 3);
  EXPECT_TRUE(last.stepped);
  EXPECT_FLOAT_EQ(static_cast<float>(m.value()), 0.7f - 0.1f * 2.0f);  // divided by 1
}

TEST(OptimWrapper, ClippingBoundsTheGradientNorm) {
  Scalar m;
  OptimWrapperOptions o = sgd(0.1, 1, 1);
  o.clip_max_norm = 1.0;
  OptimWrapper ow(m, o);
  ow.update_params(m.loss(10), 0);
  EXPECT_NEAR(m.value(), 1.0 - 0.1 * 1.0, 1e-5);  // gradient 10 clipped to norm 1
}

TEST(OptimWrapper, Fp16ScalesTheLossUnscalesTheGradientAndSkipsNonFiniteSteps) {
  Scalar m;
  AmpOptions amp;
  amp.dtype = Precision::kFp16;
  amp.loss_scaler.init_scale = 1024;
  AmpOptimWrapper ow(m, sgd(0.1, 1, 3), amp);
  const UpdateResult clean = ow.update_params(m.loss(2), 0);
  EXPECT_TRUE(clean.stepped);
  EXPECT_FALSE(clean.nonfinite_grads);
  EXPECT_DOUBLE_EQ(clean.loss_scale, 1024);
  EXPECT_FLOAT_EQ(static_cast<float>(m.value()), 1.0f - 0.1f * 2.0f);  // unscaled before step

  const UpdateResult bad = ow.update_params(m.loss(std::numeric_limits<double>::infinity()), 1);
  EXPECT_TRUE(bad.update_iter);
  EXPECT_FALSE(bad.stepped);
  EXPECT_TRUE(bad.nonfinite_grads);
  EXPECT_DOUBLE_EQ(bad.loss_scale, 512);  // backed off
  EXPECT_DOUBLE_EQ(ow.loss_scale_state().scale, 512);
  EXPECT_EQ(ow.loss_scale_state().growth_tracker, 0);
  EXPECT_FLOAT_EQ(static_cast<float>(m.value()), 0.8f);  // the step was skipped
  EXPECT_FALSE(m.w.grad().defined() && m.w.grad().isfinite().all().item<bool>() == false)
      << "the inf gradient was not dropped";
}

TEST(OptimWrapper, ScaleIsZeroWithoutFp16) {
  Scalar m;
  OptimWrapper ow(m, sgd(0.1, 1, 1));
  EXPECT_DOUBLE_EQ(ow.update_params(m.loss(1), 0).loss_scale, 0.0);
  EXPECT_DOUBLE_EQ(ow.loss_scale_state().scale, 0.0);
  AmpOptions amp;
  amp.dtype = Precision::kBf16;
  AmpOptimWrapper bf16(m, sgd(0.1, 1, 1), amp);
  EXPECT_DOUBLE_EQ(bf16.update_params(m.loss(1), 0).loss_scale, 0.0);
}

TEST(OptimWrapper, ScheduledValuesReachEveryParamGroup) {
  Scalar m;
  OptimWrapperOptions o = sgd(0.1, 1, 1);
  o.optimizer.momentum = 0.9;
  OptimWrapper ow(m, o);
  EXPECT_DOUBLE_EQ(ow.lr(), 0.1);
  EXPECT_DOUBLE_EQ(ow.momentum(), 0.9);
  ow.set_lr_momentum(0.02, 0.85);
  auto& g = static_cast<torch::optim::SGDOptions&>(ow.optimizer().param_groups()[0].options());
  EXPECT_DOUBLE_EQ(g.lr(), 0.02);
  EXPECT_DOUBLE_EQ(g.momentum(), 0.85);
  EXPECT_DOUBLE_EQ(ow.momentum(), 0.85);
  ow.set_lr_momentum(0.03, std::nullopt);  // momentum unscheduled: the configured one
  EXPECT_DOUBLE_EQ(g.lr(), 0.03);
  EXPECT_DOUBLE_EQ(ow.momentum(), 0.9);
}

TEST(OptimWrapper, AdamBetaOneIsTheScheduledMomentum) {
  Scalar m;
  OptimWrapperOptions o = sgd(0.1, 1, 1);
  o.optimizer.type = "AdamW";
  o.optimizer.beta1 = 0.9;
  o.optimizer.beta2 = 0.99;
  OptimWrapper ow(m, o);
  ow.set_lr_momentum(0.01, 0.8);
  auto& g = static_cast<torch::optim::AdamWOptions&>(ow.optimizer().param_groups()[0].options());
  EXPECT_DOUBLE_EQ(std::get<0>(g.betas()), 0.8);
  EXPECT_DOUBLE_EQ(std::get<1>(g.betas()), 0.99);
}

TEST(OptimWrapper, BadSettingsAreRefusedNamingTheKey) {
  Scalar m;
  OptimWrapperOptions o = sgd(0.1, 0, 1);
  try {
    OptimWrapper ow(m, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("accumulative_counts"), std::string::npos) << e.what();
  }
  o = sgd(0.1, 1, 1);
  o.optimizer.type = "Lion";
  EXPECT_THROW(OptimWrapper refused(m, o), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::engine
