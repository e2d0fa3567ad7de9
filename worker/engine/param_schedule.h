// Learning-rate and momentum schedules in mmengine's terms (param_scheduler), as closed forms of
// the global iteration: the value at iteration i is a pure function of i, so resuming needs
// only the iteration counter and every rank computes the same value without communication.
//
// Phases of one parameter (lr, or momentum = SGD momentum / Adam beta1) apply one after another
// by [begin, end); each starts from the value the previous one left (mmengine's chainable
// behaviour). At iteration i a phase uses step t = i - begin, and after its end it holds the
// value of its last step t = end - begin - 1 (mmengine steps the scheduler after each
// iteration and stops at end). Epoch-based phases are converted to iterations with
// iters_per_epoch: with convert_to_iter_based they change every iteration, without they change
// at epoch boundaries only.
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
  // Throws std::invalid_argument when two phases of the same parameter overlap (naming both),
  // or iters_per_epoch < 1 while a phase counts epochs.
  ParamSchedule(std::vector<SchedulePhase> phases, std::int64_t iters_per_epoch);

  // The value of `param` at global iteration `iter` (0-based), starting from `base` (the
  // optimizer's configured lr or momentum).
  double value(ScheduledParam param, double base, std::int64_t iter) const;
  bool schedules(ScheduledParam param) const;

 private:
  // A phase in iteration units.
  struct Phase {
    SchedulePhase spec;
    double begin;
    double end;
    double unit;  // iterations per schedule step (1, or iters_per_epoch for epoch stepping)
  };
  static double apply(const Phase& phase, double start_value, double t);
  std::vector<Phase> phases_;  // sorted by begin
};

}  // namespace ddp3d::engine
