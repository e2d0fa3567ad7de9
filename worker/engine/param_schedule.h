// Learning-rate and momentum schedules with mmengine's semantics (param_scheduler): each
// scheduler is "chainable" -- at every step it updates the parameter's current value -- and
// schedulers apply in config order, so overlapping ones compose (a LinearLR warm-up over a
// StepLR or a cosine) exactly as in mmengine. Iteration-based schedulers step after every
// iteration, epoch-based ones after every epoch; convert_to_iter_based turns epoch counts
// (begin, end, T_max, step_size, milestones) into iterations.
//
// The value at global iteration i is a pure function of i (the recurrence replayed from 0, with
// a cursor so sequential queries cost O(1)), so resuming needs only the iteration counter and
// every rank computes the same value without communication.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace ddp3d::engine {

enum class ScheduledParam { kLr, kMomentum };

// What one scheduler does at each of its steps (mmengine's _get_value): the built-in ones are
// in schedule_rules.h, and param_scheduler_registry() builds them from config by `type`.
class ScheduleRule {
 public:
  virtual ~ScheduleRule() = default;
  // The value after the phase's step t (0: its first step) from the value v before it. base:
  // the optimizer's configured value; total: end - begin - 1 (mmengine's total_iters).
  virtual double step(double v, double t, double base, double total) const = 0;
  // The same rule with its own epoch counts (T_max, step_size, milestones) times
  // iters_per_epoch, for convert_to_iter_based.
  virtual std::shared_ptr<const ScheduleRule> in_iterations(double iters_per_epoch) const = 0;
};

struct SchedulePhase {
  std::shared_ptr<const ScheduleRule> rule;
  ScheduledParam param = ScheduledParam::kLr;
  bool by_epoch = true;
  bool convert_to_iter_based = false;
  double begin = 0;
  double end = std::numeric_limits<double>::infinity();  // unset: to the end of training
  // For messages: "param_scheduler.1 (CosineAnnealingLR)".
  std::string name;
};

class ParamSchedule {
 public:
  // Throws std::invalid_argument when iters_per_epoch < 1, a phase has no rule or has
  // end <= begin.
  ParamSchedule(std::vector<SchedulePhase> phases, std::int64_t iters_per_epoch);

  // The value of `param` used by global iteration `iter` (0-based), starting from `base` (the
  // optimizer's configured lr or momentum). Not thread-safe (the cursor).
  double value(ScheduledParam param, double base, std::int64_t iter) const;
  bool schedules(ScheduledParam param) const;

 private:
  // One chainable step t (t = step - begin) of `phase` on value v.
  static double step(const SchedulePhase& phase, double v, double t, double base) {
    return phase.rule->step(v, t, base, phase.end - phase.begin - 1);
  }
  // Applies the steps of global step `g` of the iteration-based (epoch_steps false) or
  // epoch-based phases of `param` to v.
  double advance(ScheduledParam param, double v, double base, std::int64_t g,
                 bool epoch_steps) const;

  std::vector<SchedulePhase> phases_;  // config order; iteration units when iteration-based
  std::int64_t iters_per_epoch_;
  struct Cursor {
    bool valid = false;
    double base = 0;
    std::int64_t iter = 0;
    double value = 0;
  };
  mutable Cursor cursors_[2];
};

}  // namespace ddp3d::engine
