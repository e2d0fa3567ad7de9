#include "worker/engine/param_schedule.h"

#include <algorithm>
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
    if (!p.rule) throw std::invalid_argument(p.name + ": no schedule rule");
    if (p.by_epoch && iters_per_epoch < 1) {
      throw std::invalid_argument(p.name +
                                  ": an epoch-based schedule needs at least one "
                                  "iteration per epoch");
    }
    if (p.by_epoch && p.convert_to_iter_based) {
      const auto scale = static_cast<double>(iters_per_epoch);
      p.begin *= scale;
      p.end *= scale;
      p.rule = p.rule->in_iterations(scale);
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
