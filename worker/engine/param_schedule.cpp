#include "worker/engine/param_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace ddp3d::engine {
namespace {

bool is_epoch_stepped(const SchedulePhase& p) {
  return p.by_epoch && !p.convert_to_iter_based;
}

}  // namespace

ParamSchedule::ParamSchedule(std::vector<SchedulePhase> phases, std::int64_t iters_per_epoch)
    : iters_per_epoch_(iters_per_epoch) {
  for (SchedulePhase& p : phases) {
    if (p.by_epoch && iters_per_epoch < 1) {
      throw std::invalid_argument(p.name +
                                  ": an epoch-based schedule needs at least one "
                                  "iteration per epoch");
    }
    if (p.by_epoch && p.convert_to_iter_based) {
      const auto scale = static_cast<double>(iters_per_epoch);
      p.begin *= scale;
      p.end *= scale;
      p.t_max *= scale;
      p.step_size *= scale;
      for (double& m : p.milestones) m *= scale;
    }
    if (!(p.end > p.begin))
      throw std::invalid_argument(p.name + ": end must be greater than begin");
    phases_.push_back(std::move(p));
  }
}

bool ParamSchedule::schedules(ScheduledParam param) const {
  return std::any_of(phases_.begin(), phases_.end(),
                     [&](const SchedulePhase& p) { return p.param == param; });
}

double ParamSchedule::step(const SchedulePhase& s, double v, double t, double base) {
  // mmengine's _get_value of each scheduler; t is last_step (0 on the phase's first step).
  const double total = s.end - s.begin - 1;  // mmengine's total_iters
  switch (s.kind) {
    case ScheduleKind::kStep:
      if (t == 0 || std::fmod(t, s.step_size) != 0) return v;
      return v * s.gamma;
    case ScheduleKind::kMultiStep: {
      const auto hits = std::count(s.milestones.begin(), s.milestones.end(), t);
      return v * std::pow(s.gamma, static_cast<double>(hits));
    }
    case ScheduleKind::kConstant:
      if (t == 0) return v * s.factor;
      if (t != total) return v;
      return v / s.factor;
    case ScheduleKind::kLinear:
      if (t == 0) return v * s.start_factor;
      if (t > total) return v;
      return v * (1.0 + (s.end_factor - s.start_factor) /
                            (total * s.start_factor + (t - 1) * (s.end_factor - s.start_factor)));
    case ScheduleKind::kCosine: {
      const double pi = std::numbers::pi;
      if (t == 0) return v;
      if (std::fmod(t - 1 - s.t_max, 2 * s.t_max) == 0) {
        return v + (base - s.eta_min) * (1 - std::cos(pi / s.t_max)) / 2;
      }
      return (1 + std::cos(pi * t / s.t_max)) / (1 + std::cos(pi * (t - 1) / s.t_max)) *
                 (v - s.eta_min) +
             s.eta_min;
    }
  }
  return v;
}

double ParamSchedule::advance(ScheduledParam param, double v, double base, std::int64_t g,
                              bool epoch_steps) const {
  const auto gd = static_cast<double>(g);
  for (const SchedulePhase& p : phases_) {
    if (p.param != param || is_epoch_stepped(p) != epoch_steps) continue;
    if (gd >= p.begin && gd < p.end) v = step(p, v, gd - p.begin, base);
  }
  return v;
}

double ParamSchedule::value(ScheduledParam param, double base, std::int64_t iter) const {
  Cursor& c = cursors_[param == ScheduledParam::kLr ? 0 : 1];
  if (!c.valid || c.base != base || iter < c.iter) {
    // Construction: every scheduler takes its initial step (global step 0), in config order.
    double v = base;
    for (const SchedulePhase& p : phases_) {
      if (p.param == param && p.begin <= 0 && p.end > 0) v = step(p, v, 0, base);
    }
    c = Cursor{true, base, 0, v};
  }
  while (c.iter < iter) {
    ++c.iter;  // after iteration c.iter - 1: iteration-based steps, then at an epoch's end
               // (mmengine's after_train_iter, then after_train_epoch) the epoch-based ones.
    c.value = advance(param, c.value, base, c.iter, false);
    if (iters_per_epoch_ > 0 && c.iter % iters_per_epoch_ == 0) {
      c.value = advance(param, c.value, base, c.iter / iters_per_epoch_, true);
    }
  }
  return c.value;
}

}  // namespace ddp3d::engine
