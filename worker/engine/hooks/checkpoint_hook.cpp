#include "worker/engine/hooks/checkpoint_hook.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/io/atomic_file.h"
#include "common/io/regular_file.h"
#include "common/parse_number.h"
#include "worker/engine/checkpoint_file.h"
#include "worker/engine/collectives.h"

namespace ddp3d::engine {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

CheckpointHook::CheckpointHook(CheckpointHookOptions options, TrainLog& log, AnyRank any_rank,
                               Clock clock)
    : options_(std::move(options)),
      log_(log),
      any_rank_(std::move(any_rank)),
      clock_(clock ? std::move(clock) : Clock(steady_seconds)) {
  if (options_.interval_seconds &&
      (!std::isfinite(*options_.interval_seconds) || *options_.interval_seconds <= 0)) {
    throw std::invalid_argument(
        "default_hooks.checkpoint.interval_seconds: must be a positive number of seconds");
  }
  if (options_.accumulative_counts < 1)
    throw std::invalid_argument("CheckpointHook: accumulative_counts must be >= 1");
  if (!options_.rule.empty() && options_.rule != "greater" && options_.rule != "less")
    throw std::invalid_argument("default_hooks.checkpoint.rule: expected greater or less");
}

void write_best_checkpoint_record(const std::filesystem::path& work_dir,
                                  const BestCheckpointRecord& record) {
  std::ostringstream out;
  out << record.checkpoint.string() << '\n'
      << record.metric << '\n'
      << std::setprecision(17) << record.score << '\n';
  io::write_file_atomically(work_dir / "best_checkpoint", out.str());
}

std::optional<BestCheckpointRecord> read_best_checkpoint_record(
    const std::filesystem::path& work_dir) {
  const std::filesystem::path path = work_dir / "best_checkpoint";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::istringstream in(io::read_regular_file(path, 64 * io::kKiB, "best checkpoint record"));
  BestCheckpointRecord r;
  std::string checkpoint;
  std::string score;
  if (!std::getline(in, checkpoint) || !std::getline(in, r.metric) || !std::getline(in, score) ||
      checkpoint.empty() || r.metric.empty()) {
    throw std::runtime_error(path.string() + ": expected 3 lines: checkpoint, metric, value");
  }
  r.checkpoint = checkpoint;
  const double inf = std::numeric_limits<double>::infinity();
  r.score = parse_real(path.string() + " line 3", score, -inf, inf);
  return r;
}

bool CheckpointHook::due(std::int64_t epochs_done, std::int64_t max_epochs) const {
  const std::int64_t every = options_.interval;
  const bool interval_hit = options_.by_epoch && every > 0 && epochs_done % every == 0;
  return interval_hit || (options_.save_last && epochs_done == max_epochs);
}

void CheckpointHook::before_train(LoopContext& loop) {
  if (!options_.save_best.empty() && options_.resumed && loop.run_context().rank == 0) {
    try {
      resumed_best_ = read_best_checkpoint_record(options_.work_dir);
    } catch (const std::exception& e) {
      log_.warning(std::string(e.what()) + "; save_best starts over");
    }
  }
  // The resume point is on disk already: the first slot this process saves is the next one.
  if (options_.interval > 0) saved_slot_ = loop.progress().global_iter / options_.interval;
  last_save_ = clock_();
}

bool CheckpointHook::any_rank(LoopContext& loop, bool mine) {
  if (any_rank_) return any_rank_(mine);
  const RunContext& ctx = loop.run_context();
  if (ctx.pg == nullptr) return mine;
  return allreduce_mean(ctx.pg, {mine ? 1.0 : 0.0})[0] > 0;
}

bool CheckpointHook::time_due(LoopContext& loop) {
  if (!options_.interval_seconds) return false;
  return any_rank(loop, clock_() - last_save_ >= *options_.interval_seconds);
}

void CheckpointHook::before_train_iter(LoopContext& loop, TrainIter& /*iter*/) {
  const LoopProgress& p = loop.progress();
  // A stop agreed on this boundary (preemption) has saved already, on every rank alike.
  if (p.global_iter % options_.accumulative_counts != 0 || loop.stop_reason()) return;
  // The first boundary at or after each multiple of the interval (with gradient accumulation
  // a multiple may fall inside an update).
  const bool by_iters = !options_.by_epoch && options_.interval > 0 &&
                        p.global_iter / options_.interval > saved_slot_;
  // Every rank takes part in the time vote at every boundary, whatever else is due.
  const bool by_time = time_due(loop);
  if ((!by_iters && !by_time) || p.global_iter == last_saved_iter_) return;
  if (options_.interval > 0) saved_slot_ = p.global_iter / options_.interval;
  loop.save_checkpoint(options_.work_dir / ("iter_" + std::to_string(p.global_iter) + ".pth"));
}

void CheckpointHook::after_train_epoch(LoopContext& loop) {
  const LoopProgress& p = loop.progress();
  if (options_.by_epoch) {
    if (!due(p.epochs_completed, p.max_epochs)) return;
    loop.save_checkpoint(options_.work_dir /
                         ("epoch_" + std::to_string(p.epochs_completed) + ".pth"));
    return;
  }
  // Iteration mode: the end of training has no next boundary, so the last one saves here.
  save_last_iteration(loop);
}

void CheckpointHook::after_train(LoopContext& loop) {
  // An IterBasedTrainLoop may end inside an epoch, with no after_train_epoch to save at.
  if (!loop.stop_reason()) save_last_iteration(loop);
}

void CheckpointHook::save_last_iteration(LoopContext& loop) {
  const LoopProgress& p = loop.progress();
  if (!options_.save_last || p.global_iter != p.max_iters() || p.global_iter == last_saved_iter_)
    return;
  loop.save_checkpoint(options_.work_dir / ("iter_" + std::to_string(p.global_iter) + ".pth"));
}

std::optional<std::pair<std::string, bool>> CheckpointHook::best_metric(const MetricMap& metrics) {
  const std::optional<KeyMetric> key =
      options_.key_metric ? options_.key_metric(metrics) : std::nullopt;
  std::string name = options_.save_best;
  if (name == "auto") {
    if (!key) {
      if (!warned_missing_metric_)
        log_.warning("save_best auto: the evaluator names no key metric");
      warned_missing_metric_ = true;
      return std::nullopt;
    }
    name = key->name;
  }
  if (!metrics.contains(name)) {
    if (!warned_missing_metric_) {
      std::string names;
      for (const auto& [k, v] : metrics) names += (names.empty() ? "" : ", ") + k;
      log_.warning("default_hooks.checkpoint.save_best: the validation has no metric \"" + name +
                   "\" (it has: " + names + "); no best checkpoint is kept");
    }
    warned_missing_metric_ = true;
    return std::nullopt;
  }
  const bool greater = options_.rule.empty()
                           ? !(key && key->name == name && !key->greater_is_better)
                           : options_.rule == "greater";
  return std::make_pair(name, greater);
}

void CheckpointHook::after_val(LoopContext& loop, const ValResult& result) {
  if (options_.save_best.empty()) return;
  // Only rank 0 holds the metrics (the others' maps are empty).
  std::optional<std::pair<std::string, bool>> metric;
  bool improved = false;
  double value = 0;
  if (!result.metrics.empty()) {
    metric = best_metric(result.metrics);
    if (metric && resumed_best_) {
      // The best before the resume, if it was of this metric and its file is still there.
      if (resumed_best_->metric == metric->first &&
          std::filesystem::exists(resumed_best_->checkpoint)) {
        best_score_ = resumed_best_->score;
        best_metric_ = resumed_best_->metric;
        best_checkpoint_ = resumed_best_->checkpoint;
      }
      resumed_best_.reset();
    }
    if (metric) {
      value = result.metrics.at(metric->first);
      improved = std::isfinite(value) &&
                 (!best_score_ || (metric->second ? value > *best_score_ : value < *best_score_));
    }
  }
  if (!any_rank(loop, improved)) return;
  // Only rank 0 (the writer, which has the metric) needs the file's right name.
  const LoopProgress& p = loop.progress();
  std::string stem = "best_";
  for (const char c : metric ? metric->first : std::string("metric"))
    stem += std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' ? c : '_';
  // An IterBasedTrainLoop validates inside epochs: its best files are named by iteration.
  stem += options_.by_epoch && p.by_epoch() ? "_epoch_" + std::to_string(p.epochs_completed)
                                            : "_iter_" + std::to_string(p.global_iter);
  if (improved) {
    log_.info("save_best: " + metric->first + " = " + std::to_string(value) +
              (best_score_ ? " (best before: " + std::to_string(*best_score_) + ")" : ""));
    best_score_ = value;
    best_metric_ = metric->first;
  }
  replaced_best_ = best_checkpoint_;
  best_checkpoint_ = options_.work_dir / (stem + ".pth");
  loop.save_checkpoint(best_checkpoint_);
}

void CheckpointHook::after_save_checkpoint(LoopContext& loop, const SavedCheckpoint& saved) {
  // Every resume point the loop writes (this hook's or another's) restarts the time interval
  // on every rank. The best file is not one: an interval or the last checkpoint due at the
  // same iteration is still written. The bookkeeping below is the writing rank's.
  const bool best = saved.path == best_checkpoint_;
  if (!best) {
    last_save_ = clock_();
    last_saved_iter_ = loop.progress().global_iter;
  }
  if (!saved.written) return;
  if (best) {
    // Not a resume point of its own (last_checkpoint and max_keep are about those): the
    // training state it holds is also in the interval's checkpoints.
    write_best_checkpoint_record(options_.work_dir,
                                 {saved.path, best_metric_, best_score_.value_or(0)});
    std::error_code ec;
    if (!replaced_best_.empty() && replaced_best_ != saved.path &&
        std::filesystem::remove(replaced_best_, ec)) {
      log_.info("removed old best checkpoint " + replaced_best_.string());
    }
    log_.info("saved best checkpoint " + saved.path.string());
    return;
  }
  write_last_checkpoint(options_.work_dir, saved.path);
  for (const auto& removed : remove_old_checkpoints(options_.work_dir, options_.max_keep,
                                                    loop.progress().iters_per_epoch)) {
    log_.info("removed old checkpoint " + removed.string());
  }
  log_.info("saved checkpoint " + saved.path.string());
}

}  // namespace ddp3d::engine
