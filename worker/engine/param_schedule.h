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
#include <string>
#include <vector>

namespace ddp3d::engine {

enum class ScheduledParam { kLr, kMomentum };

enum class ScheduleKind { kStep, kMultiStep, kLinear, kConstant, kCosine };

struct SchedulePhase {
  ScheduleKind kind = ScheduleKind::kCosine;
  ScheduledParam param = ScheduledParam::kLr;
  bool by_epoch = true;
  bool convert_to_iter_based = false;
  double begin = 0;
  double end = std::numeric_limits<double>::infinity();  // unset: to the end of training
  // kStep
  double step_size = 1;
  // kMultiStep (relative to begin, like mmengine)
  std::vector<double> milestones;
  // kStep / kMultiStep
  double gamma = 0.1;
  // kLinear
  double start_factor = 1.0 / 3;
  double end_factor = 1.0;
  // kConstant
  double factor = 1.0 / 3;
  // kCosine
  double t_max = 1;
  double eta_min = 0;
  // For messages: "param_scheduler.1 (CosineAnnealingLR)".
  std::string name;
};

class ParamSchedule {
 public:
  // Throws std::invalid_argument when iters_per_epoch < 1 or a phase has end <= begin.
  ParamSchedule(std::vector<SchedulePhase> phases, std::int64_t iters_per_epoch);

  // The value of `param` used by global iteration `iter` (0-based), starting from `base` (the
  // optimizer's configured lr or momentum). Not thread-safe (the cursor).
  double value(ScheduledParam param, double base, std::int64_t iter) const;
  bool schedules(ScheduledParam param) const;

 private:
  // One chainable step t (t = step - begin) of `phase` on value v.
  static double step(const SchedulePhase& phase, double v, double t, double base);
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
