#include "worker/engine/hooks/logger_hook.h"

#include <stdexcept>
#include <string>

#include "worker/engine/collectives.h"

namespace ddp3d::engine {

LoggerHook::LoggerHook(TrainLog& log, dist::ProcessGroup* pg, std::int64_t interval)
    : log_(log), pg_(pg), interval_(interval) {
  if (interval < 1) {
    throw std::invalid_argument("default_hooks.logger.interval must be >= 1, got " +
                                std::to_string(interval));
  }
}

void LoggerHook::before_train_epoch(LoopContext& /*loop*/) {
  reset_window();
}

void LoggerHook::reset_window() {
  for (double& s : loss_sums_) s = 0;
  time_sum_ = data_time_sum_ = 0;
  count_ = 0;
}

void LoggerHook::add_to_window(const TrainIter& iter) {
  if (names_.empty()) {
    for (const auto& [name, value] : iter.log_vars) names_.push_back(name);
    loss_sums_.assign(names_.size(), 0.0);
  }
  if (iter.log_vars.size() != names_.size()) {
    throw std::logic_error("the model returned " + std::to_string(iter.log_vars.size()) +
                           " loss terms, earlier " + std::to_string(names_.size()));
  }
  for (std::size_t k = 0; k < names_.size(); ++k) {
    if (iter.log_vars[k].first != names_[k]) {
      throw std::logic_error("the model returned loss term '" + iter.log_vars[k].first +
                             "' where earlier iterations returned '" + names_[k] + "'");
    }
    loss_sums_[k] += iter.log_vars[k].second;
  }
  time_sum_ += iter.iter_seconds;
  data_time_sum_ += iter.data_seconds;
  ++count_;
}

void LoggerHook::after_train_iter(LoopContext& loop, TrainIter& iter) {
  if (iter.update.nonfinite_grads) {
    log_.warning("fp16: inf/NaN gradients, step skipped, loss scale now " +
                 std::to_string(iter.update.loss_scale));
  }
  add_to_window(iter);
  const LoopProgress& p = loop.progress();
  const std::int64_t done_in_epoch = p.iter_in_epoch + 1;
  // Also the last iteration of the run (an IterBasedTrainLoop may end inside an epoch).
  if (done_in_epoch % interval_ != 0 && done_in_epoch != p.iters_per_epoch &&
      p.global_iter + 1 != p.max_iters())
    return;

  const auto n = static_cast<double>(count_);
  std::vector<double> values;
  for (const double s : loss_sums_) values.push_back(s / n);
  iter.window_mean_loss = values[0];  // this rank's, before the mean over ranks
  values.push_back(time_sum_ / n);
  values.push_back(data_time_sum_ / n);
  values = allreduce_mean(pg_, values);  // every rank logs the same numbers

  IterRecord r;
  r.epoch = p.epoch + 1;
  r.iter_in_epoch = done_in_epoch;
  r.iters_per_epoch = p.iters_per_epoch;
  r.global_iter = p.global_iter + 1;
  r.lr = iter.lr;
  r.momentum = iter.momentum;
  r.time = values[names_.size()];
  r.data_time = values[names_.size() + 1];
  r.eta_seconds = r.time * static_cast<double>(p.max_iters() - r.global_iter);
  for (std::size_t k = 0; k < names_.size(); ++k) r.losses.emplace_back(names_[k], values[k]);
  log_.iteration(r);
  reset_window();
}

void LoggerHook::after_val(LoopContext& loop, const ValResult& result) {
  const LoopProgress& p = loop.progress();
  log_.metrics("val", p.epoch, result.iters, p.global_iter, result.metrics);
}

}  // namespace ddp3d::engine
