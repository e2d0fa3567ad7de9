#include "worker/engine/hooks/preemption_hook.h"

#include <cmath>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "worker/engine/collectives.h"

namespace ddp3d::engine {

PreemptionHook::PreemptionHook(std::filesystem::path work_dir, std::int64_t accumulative_counts,
                               TrainLog& log, AnyRank any_rank)
    : work_dir_(std::move(work_dir)),
      accumulative_counts_(accumulative_counts),
      log_(log),
      any_rank_(std::move(any_rank)) {
  if (accumulative_counts_ < 1)
    throw std::invalid_argument("PreemptionHook: accumulative_counts must be >= 1");
}

void PreemptionHook::on_signal(LoopContext& /*loop*/, int signal) {
  if (signal == SIGTERM || signal == SIGINT) signal_ = signal;
}

void PreemptionHook::before_train_iter(LoopContext& loop, TrainIter& /*iter*/) {
  const LoopProgress& p = loop.progress();
  if (p.global_iter % accumulative_counts_ != 0) return;
  const bool mine = signal_ != 0;
  const RunContext& ctx = loop.run_context();
  Vote vote{mine ? 1 : 0, mine ? ctx.rank : -1};
  if (any_rank_) {
    vote = any_rank_(mine);
  } else if (ctx.pg != nullptr) {
    // Means of {signalled, signalled * (rank + 1)}: small integers, exact in a double.
    const double flag = mine ? 1.0 : 0.0;
    const std::vector<double> mean =
        allreduce_mean(ctx.pg, {flag, flag * static_cast<double>(ctx.rank + 1)});
    vote.ranks = static_cast<int>(std::lround(mean[0] * ctx.world_size));
    vote.rank = vote.ranks == 1 ? static_cast<int>(std::lround(mean[1] * ctx.world_size)) - 1 : -1;
  }
  if (vote.ranks == 0) return;
  stopped_by_ = mine ? signal_ : SIGTERM;
  const std::filesystem::path path = work_dir_ / ("iter_" + std::to_string(p.global_iter) + ".pth");
  const std::string who =
      vote.ranks == 1 ? "rank " + std::to_string(vote.rank) : std::to_string(vote.ranks) + " ranks";
  const std::string line = "a termination signal on " + who + ": saving " + path.string() +
                           " at epoch " + std::to_string(p.epoch + 1) + ", iteration " +
                           std::to_string(p.iter_in_epoch) + " of " +
                           std::to_string(p.iters_per_epoch) + " and stopping (resumable)";
  log_.warning(line);
  // The other ranks' logs are silent; the one that got the signal says so.
  if (mine && ctx.rank != 0)
    ddp3d::log::warning("rank " + std::to_string(ctx.rank) + " received SIG" +
                        sigabbrev_np(signal_) + "; " + line);
  loop.save_checkpoint(path);
  loop.request_stop("preempted by SIG" + std::string(sigabbrev_np(stopped_by_)));
}

}  // namespace ddp3d::engine
