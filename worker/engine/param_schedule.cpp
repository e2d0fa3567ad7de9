#include "worker/engine/param_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace ddp3d::engine {

ParamSchedule::ParamSchedule(std::vector<SchedulePhase> phases, std::int64_t iters_per_epoch) {
  for (SchedulePhase& spec : phases) {
    const bool epochs = spec.by_epoch;
    if (epochs && iters_per_epoch < 1) {
      throw std::invalid_argument(spec.name + ": epoch-based schedule needs at least one "
                                  "iteration per epoch");
    }
    const double scale = epochs ? static_cast<double>(iters_per_epoch) : 1.0;
    Phase p{spec, spec.begin * scale, spec.end * scale,
            epochs && !spec.convert_to_iter_based ? scale : 1.0};
    if (epochs && spec.convert_to_iter_based) {
      // Lengths counted in epochs become iterations.
      p.spec.t_max *= scale;
      p.spec.step_size *= scale;
      for (double& m : p.spec.milestones) m *= scale;
      p.unit = 1.0;
    }
    if (!(p.end > p.begin)) {
      throw std::invalid_argument(spec.name + ": end must be greater than begin");
    }
    phases_.push_back(std::move(p));
  }
  std::stable_sort(phases_.begin(), phases_.end(),
                   [](const Phase& a, const Phase& b) { return a.begin < b.begin; });
  for (std::size_t i = 0; i < phases_.size(); ++i) {
    for (std::size_t j = i + 1; j < phases_.size(); ++j) {
      if (phases_[i].spec.param == phases_[j].spec.param && phases_[j].begin < phases_[i].end) {
        throw std::invalid_argument(phases_[i].spec.name + " and " + phases_[j].spec.name +
                                    " schedule the same parameter over overlapping ranges; "
                                    "ddp3d applies phases one after another");
      }
    }
  }
}

bool ParamSchedule::schedules(ScheduledParam param) const {
  return std::any_of(phases_.begin(), phases_.end(),
                     [&](const Phase& p) { return p.spec.param == param; });
}

double ParamSchedule::apply(const Phase& phase, double v0, double t) {
  const SchedulePhase& s = phase.spec;
  switch (s.kind) {
    case ScheduleKind::kStep:
      return v0 * std::pow(s.gamma, std::floor(t / s.step_size));
    case ScheduleKind::kMultiStep: {
      const auto passed = std::count_if(s.milestones.begin(), s.milestones.end(),
                                        [&](double m) { return t >= m; });
      return v0 * std::pow(s.gamma, static_cast<double>(passed));
    }
    case ScheduleKind::kLinear: {
      // Reaches end_factor at the phase's last step (length end - begin - 1).
      const double length = (phase.end - phase.begin) / phase.unit - 1.0;
      const double frac = length <= 0 ? 1.0 : std::min(t / length, 1.0);
      return v0 * (s.start_factor + (s.end_factor - s.start_factor) * frac);
    }
    case ScheduleKind::kConstant:
      return v0 * s.factor;
    case ScheduleKind::kCosine:
      return s.eta_min + (v0 - s.eta_min) * (1.0 + std::cos(std::numbers::pi * t / s.t_max)) / 2.0;
  }
  return v0;
}

double ParamSchedule::value(ScheduledParam param, double base, std::int64_t iter) const {
  double v = base;
  const double i = static_cast<double>(iter);
  for (const Phase& p : phases_) {
    if (p.spec.param != param || i < p.begin) continue;
    // The last step the phase takes; beyond its end it holds that value.
    const double last_iter = std::isinf(p.end) ? i : std::min(i, p.end - 1.0);
    const double t = std::floor((last_iter - p.begin) / p.unit);
    if (p.spec.kind == ScheduleKind::kConstant && i >= p.end) continue;  // factor lifted at end
    v = apply(p, v, t);
  }
  return v;
}

}  // namespace ddp3d::engine
