#include "worker/engine/schedule_rules.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ddp3d::engine {

double StepRule::step(double v, double t, double /*base*/, double /*total*/) const {
  if (t == 0 || std::fmod(t, step_size_) != 0) return v;
  return v * gamma_;
}

std::shared_ptr<const ScheduleRule> StepRule::in_iterations(double iters_per_epoch) const {
  return std::make_shared<StepRule>(step_size_ * iters_per_epoch, gamma_);
}

double MultiStepRule::step(double v, double t, double /*base*/, double /*total*/) const {
  const auto hits = std::count(milestones_.begin(), milestones_.end(), t);
  return v * std::pow(gamma_, static_cast<double>(hits));
}

std::shared_ptr<const ScheduleRule> MultiStepRule::in_iterations(double iters_per_epoch) const {
  std::vector<double> milestones = milestones_;
  for (double& m : milestones) m *= iters_per_epoch;
  return std::make_shared<MultiStepRule>(std::move(milestones), gamma_);
}

double LinearRule::step(double v, double t, double /*base*/, double total) const {
  if (t == 0) return v * start_factor_;
  if (t > total) return v;
  return v * (1.0 + (end_factor_ - start_factor_) /
                        (total * start_factor_ + (t - 1) * (end_factor_ - start_factor_)));
}

std::shared_ptr<const ScheduleRule> LinearRule::in_iterations(double /*iters_per_epoch*/) const {
  return std::make_shared<LinearRule>(*this);
}

double ConstantRule::step(double v, double t, double /*base*/, double total) const {
  if (t == 0) return v * factor_;
  if (t != total) return v;
  return v / factor_;
}

std::shared_ptr<const ScheduleRule> ConstantRule::in_iterations(double /*iters_per_epoch*/) const {
  return std::make_shared<ConstantRule>(*this);
}

double CosineAnnealingRule::step(double v, double t, double base, double /*total*/) const {
  const double pi = std::numbers::pi;
  if (t == 0) return v;
  if (std::fmod(t - 1 - t_max_, 2 * t_max_) == 0) {
    return v + (base - eta_min_) * (1 - std::cos(pi / t_max_)) / 2;
  }
  return (1 + std::cos(pi * t / t_max_)) / (1 + std::cos(pi * (t - 1) / t_max_)) * (v - eta_min_) +
         eta_min_;
}

std::shared_ptr<const ScheduleRule> CosineAnnealingRule::in_iterations(
    double iters_per_epoch) const {
  return std::make_shared<CosineAnnealingRule>(t_max_ * iters_per_epoch, eta_min_);
}

}  // namespace ddp3d::engine
