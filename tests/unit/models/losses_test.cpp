// Each loss against values computed by hand or with Python torch (float64).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "worker/models/dense_heads/anchor3d_head.h"
#include "worker/models/losses/cross_entropy_loss.h"
#include "worker/models/losses/focal_loss.h"
#include "worker/models/losses/smooth_l1_loss.h"

namespace ddp3d::models {
namespace {

const auto kF64 = at::TensorOptions().dtype(at::kDouble);

TEST(FocalLoss, MatchesReference) {
  // Reference from the venv's Python torch, mmdet's py_sigmoid_focal_loss formula:
  //   t = one_hot(labels, 3)[:, :2]; p = sigmoid(x); pt = (1-p)t + p(1-t)
  //   w = (0.25 t + 0.75 (1-t)) pt²;  Σ(BCE(x, t) · w · weight) / (2 + eps_f32)
  const at::Tensor logits = at::tensor({1.0, -2.0, 0.5, 0.3, -1.0, 2.0}, kF64).view({3, 2});
  const at::Tensor labels = at::tensor({0, 2, 1}, at::kLong);  // 2 = background
  const at::Tensor weight = at::tensor({1.0, 1.0, 0.5}, kF64);
  const FocalLoss focal(FocalLossOptions{});
  EXPECT_NEAR(focal(logits, labels, weight, 2.0).item<double>(), 0.2551204379165407, 1e-12);
}

TEST(FocalLoss, DownWeightsEasyExamples) {
  const FocalLoss focal(FocalLossOptions{});
  const at::Tensor bg = at::tensor({0}, at::kLong).fill_(1);  // background for C = 1
  const double easy = focal(at::full({1, 1}, -5.0, kF64), bg, {}, 1.0).item<double>();
  const double hard = focal(at::full({1, 1}, 5.0, kF64), bg, {}, 1.0).item<double>();
  // Easy negative: 0.75 · σ(-5)² · softplus(-5); hard negative: 0.75 · σ(5)² · softplus(5).
  const double s_easy = 1 / (1 + std::exp(5.0));
  const double s_hard = 1 / (1 + std::exp(-5.0));
  const double eps = 1.1920928955078125e-07;  // float32 eps added to avg_factor
  EXPECT_NEAR(easy, 0.75 * s_easy * s_easy * std::log1p(std::exp(-5.0)) / (1 + eps), 1e-12);
  EXPECT_NEAR(hard, 0.75 * s_hard * s_hard * std::log1p(std::exp(5.0)) / (1 + eps), 1e-12);
  EXPECT_LT(easy, 1e-4 * hard);
}

TEST(SmoothL1Loss, MatchesHandComputedValues) {
  // β = 1/9: |d| = 0 → 0; 0.05 → 0.5·0.05²·9 = 0.01125; 0.5 → 0.5 - 1/18; 1 → 1 - 1/18.
  // Σ = 1.4001388…; × loss_weight 2 / (avg_factor 2 + float32 eps).
  const SmoothL1Loss l1(SmoothL1LossOptions{});
  const at::Tensor pred = at::tensor({0.0, 0.05, 0.5, -1.0}, kF64);
  const at::Tensor target = at::zeros({4}, kF64);
  const double eps = 1.1920928955078125e-07;
  const double sum = 0.01125 + (0.5 - 1.0 / 18) + (1 - 1.0 / 18);
  EXPECT_NEAR(l1(pred, target, at::ones({4}, kF64), 2.0).item<double>(), 2 * sum / (2 + eps),
              1e-12);
  // Weights select elements.
  EXPECT_NEAR(l1(pred, target, at::tensor({0.0, 0.0, 0.0, 1.0}, kF64), 1.0).item<double>(),
              2 * (1 - 1.0 / 18) / (1 + eps), 1e-12);
}

TEST(CrossEntropyLoss, MatchesHandComputedValues) {
  // -log softmax: log(1 + e^-2) and log 2; Σ · 0.2 / 2 (Python torch: 0.08200751427226304).
  const CrossEntropyLoss ce(CrossEntropyLossOptions{});
  const at::Tensor logits = at::tensor({2.0, 0.0, 0.0, 0.0}, kF64).view({2, 2});
  const at::Tensor labels = at::tensor({0, 1}, at::kLong);
  EXPECT_NEAR(ce(logits, labels, at::ones({2}, kF64), 2.0).item<double>(), 0.08200751427226304,
              1e-12);
}

TEST(SinDifference, EncodesYawErrorAsSine) {
  const at::Tensor pred = at::zeros({1, 7}, kF64).index_fill_(1, at::tensor({6}, at::kLong), 0.9);
  const at::Tensor target = at::zeros({1, 7}, kF64).index_fill_(1, at::tensor({6}, at::kLong), 0.2);
  const auto [p, t] = add_sin_difference(pred, target);
  EXPECT_NEAR((p[0][6] - t[0][6]).item<double>(), std::sin(0.9 - 0.2), 1e-12);
  // A flip by π costs nothing in the regression (the direction classifier handles it).
  const at::Tensor flipped = target.clone().index_fill_(1, at::tensor({6}, at::kLong), 0.2 + M_PI);
  const auto [p2, t2] = add_sin_difference(flipped, target);
  EXPECT_NEAR((p2[0][6] - t2[0][6]).item<double>(), 0.0, 1e-12);
}

}  // namespace
}  // namespace ddp3d::models
