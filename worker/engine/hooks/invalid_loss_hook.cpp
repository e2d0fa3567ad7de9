#include "worker/engine/hooks/invalid_loss_hook.h"

#include <ATen/ATen.h>

#include <cmath>
#include <sstream>
#include <utility>

#include "worker/engine/collectives.h"

namespace ddp3d::engine {
namespace {

// The mean over elements keeps a NaN or an Inf anywhere in a multi-element term.
double host_value(const at::Tensor& t) {
  return t.detach().to(at::kCPU, at::kDouble).mean().item<double>();
}

}  // namespace

std::string describe_invalid_loss(const LossMap& losses, const at::Tensor& total) {
  std::ostringstream terms;
  bool invalid = false;
  auto add = [&](const std::string& name, const at::Tensor& value) {
    if (!value.defined()) return;
    const double v = host_value(value);
    invalid = invalid || !std::isfinite(v);
    terms << (terms.tellp() > 0 ? " " : "") << name << '=';
    if (std::isnan(v)) {
      terms << "nan";  // not the platform's "-nan"
    } else {
      terms << v;
    }
  };
  add("loss", total);
  for (const auto& [name, value] : losses)
    if (name != "loss") add(name, value);
  return invalid ? terms.str() : std::string();
}

InvalidLossHook::InvalidLossHook(InvalidLossHookOptions options, TrainLog& log,
                                 GatherReports gather)
    : options_(options), log_(log), gather_(std::move(gather)) {
  if (options_.max_skips < 0) throw std::invalid_argument("InvalidLossHook: max_skips < 0");
}

std::vector<std::string> InvalidLossHook::gather(LoopContext& loop, const std::string& mine) const {
  if (gather_) return gather_(mine);
  dist::ProcessGroup* pg = loop.run_context().pg;
  if (pg == nullptr) return {mine};
  // The common case costs one tiny all-reduce; the reports travel only when one is invalid.
  const double any = allreduce_mean(pg, {mine.empty() ? 0.0 : 1.0}).at(0);
  if (any == 0.0) return std::vector<std::string>(loop.run_context().world_size);
  return allgather_bytes(pg, mine);
}

void InvalidLossHook::after_train_forward(LoopContext& loop, TrainIter& iter) {
  const std::vector<std::string> reports =
      gather(loop, describe_invalid_loss(iter.losses, iter.total_loss));
  std::ostringstream what;
  for (std::size_t rank = 0; rank < reports.size(); ++rank) {
    if (reports[rank].empty()) continue;
    what << (what.tellp() > 0 ? "; " : "") << "rank " << rank << ": " << reports[rank];
  }
  if (what.tellp() == 0) return;
  const LoopProgress& p = loop.progress();
  const std::string where = "non-finite loss at epoch " + std::to_string(p.epoch + 1) +
                            ", iteration " + std::to_string(p.iter_in_epoch + 1) + " (global " +
                            std::to_string(p.global_iter + 1) + ") — " + what.str();
  if (options_.on_invalid == InvalidLossAction::kSkip && skipped_ < options_.max_skips) {
    ++skipped_;
    iter.skip = true;
    iter.skip_reason = where;
    log_.warning(where + "; iteration skipped (" + std::to_string(skipped_) + " of at most " +
                 std::to_string(options_.max_skips) +
                 ", default_hooks.check_invalid_loss.max_skips)");
    return;
  }
  const std::string why =
      options_.on_invalid == InvalidLossAction::kSkip
          ? "; more than default_hooks.check_invalid_loss.max_skips=" +
                std::to_string(options_.max_skips) + " iterations skipped"
          : "; training stopped (default_hooks.check_invalid_loss.on_invalid: skip skips such "
            "iterations instead)";
  throw NonFiniteLoss(where + why);
}

void InvalidLossHook::after_train(LoopContext& /*loop*/) {
  if (skipped_ > 0)
    log_.warning(std::to_string(skipped_) + " iterations skipped for a non-finite loss");
}

}  // namespace ddp3d::engine
