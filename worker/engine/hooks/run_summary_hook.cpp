#include "worker/engine/hooks/run_summary_hook.h"

#include <exception>
#include <string>
#include <utility>

#include "common/io/atomic_file.h"

namespace ddp3d::engine {

RunSummaryHook::RunSummaryHook(TrainLog& log, const Evaluator* evaluator,
                               std::filesystem::path json_path)
    : log_(log), evaluator_(evaluator), json_path_(std::move(json_path)) {}

void RunSummaryHook::before_train(LoopContext& /*loop*/) {
  start_ = std::chrono::steady_clock::now();
  summary_ = RunSummary{};
}

void RunSummaryHook::after_train_iter(LoopContext& loop, TrainIter& iter) {
  summary_.samples +=
      static_cast<std::int64_t>(iter.sample_indices.size()) * loop.run_context().world_size;
}

void RunSummaryHook::after_val(LoopContext& loop, const ValResult& result) {
  if (result.metrics.empty()) return;  // not rank 0
  summary_.validations.push_back(
      {loop.progress().epochs_completed, loop.progress().global_iter, result.metrics});
}

void RunSummaryHook::after_train(LoopContext& loop) {
  summary_.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  summary_.epochs = loop.progress().epochs_completed;
  summary_.iters = loop.progress().global_iter;
  summary_.stopped = loop.stop_reason();
  if (evaluator_ != nullptr && !summary_.validations.empty())
    summary_.key = evaluator_->key_metric(summary_.validations.back().metrics);
  if (!log_.enabled()) return;
  for (const std::string& line : format_run_summary(summary_)) log_.info(line);
  if (json_path_.empty()) return;
  try {
    io::write_file_atomically(json_path_, format_run_summary_json(summary_));
  } catch (const std::exception& e) {
    // The run's checkpoints are safe; a summary that cannot be written is not worth failing.
    log_.warning("the run summary was not written: " + std::string(e.what()));
  }
}

}  // namespace ddp3d::engine
