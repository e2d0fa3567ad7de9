// The built-in schedule rules (mmengine's StepLR, MultiStepLR, LinearLR, ConstantLR,
// CosineAnnealingLR and their *Momentum twins): each is one chainable step on the value, the
// recurrence PyTorch's and mmengine's schedulers use.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "worker/engine/param_schedule.h"

namespace ddp3d::engine {

// × gamma every step_size steps.
class StepRule : public ScheduleRule {
 public:
  StepRule(double step_size, double gamma) : step_size_(step_size), gamma_(gamma) {}
  double step(double v, double t, double base, double total) const override;
  std::shared_ptr<const ScheduleRule> in_iterations(double iters_per_epoch) const override;

 private:
  double step_size_;
  double gamma_;
};

// × gamma at each milestone (steps counted from the phase's begin).
class MultiStepRule : public ScheduleRule {
 public:
  MultiStepRule(std::vector<double> milestones, double gamma)
      : milestones_(std::move(milestones)), gamma_(gamma) {}
  double step(double v, double t, double base, double total) const override;
  std::shared_ptr<const ScheduleRule> in_iterations(double iters_per_epoch) const override;

 private:
  std::vector<double> milestones_;
  double gamma_;
};

// From start_factor × the value to end_factor × it, linearly over the phase.
class LinearRule : public ScheduleRule {
 public:
  LinearRule(double start_factor, double end_factor)
      : start_factor_(start_factor), end_factor_(end_factor) {}
  double step(double v, double t, double base, double total) const override;
  std::shared_ptr<const ScheduleRule> in_iterations(double iters_per_epoch) const override;

 private:
  double start_factor_;
  double end_factor_;
};

// × factor for the phase, restored at its last step.
class ConstantRule : public ScheduleRule {
 public:
  explicit ConstantRule(double factor) : factor_(factor) {}
  double step(double v, double t, double base, double total) const override;
  std::shared_ptr<const ScheduleRule> in_iterations(double iters_per_epoch) const override;

 private:
  double factor_;
};

// A cosine from the value down to eta_min over T_max steps (and back up after, as PyTorch's).
class CosineAnnealingRule : public ScheduleRule {
 public:
  CosineAnnealingRule(double t_max, double eta_min) : t_max_(t_max), eta_min_(eta_min) {}
  double step(double v, double t, double base, double total) const override;
  std::shared_ptr<const ScheduleRule> in_iterations(double iters_per_epoch) const override;

 private:
  double t_max_;
  double eta_min_;
};

}  // namespace ddp3d::engine
