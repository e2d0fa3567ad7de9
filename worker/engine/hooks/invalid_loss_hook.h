// mmdet's CheckInvalidLossHook, made collective: after every forward, the ranks agree whether
// any of them got a non-finite loss (one 1-element all-reduce), so all of them take the same
// branch before backward (a lone rank skipping backward would leave its peers' gradient
// all-reduces unmatched). Then, by `on_invalid`:
//   stop: every rank throws NonFiniteLoss naming the iteration, the ranks and their terms;
//   skip: no backward and no step this iteration (TrainIter::skip) on every rank, counted;
//         more than `max_skips` skipped iterations in the run stop as above.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/engine/hook.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {

enum class InvalidLossAction { kStop, kSkip };

struct InvalidLossHookOptions {
  InvalidLossAction on_invalid = InvalidLossAction::kStop;
  std::int64_t max_skips = 100;
};

class NonFiniteLoss : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvalidLossHook final : public Hook {
 public:
  // Every rank's description of its invalid loss ("" when finite), in rank order. The default
  // gathers them over the loop's process group; tests inject their own ranks.
  using GatherReports = std::function<std::vector<std::string>(const std::string& mine)>;

  // `log` must outlive the hook.
  InvalidLossHook(InvalidLossHookOptions options, TrainLog& log, GatherReports gather = {});

  void after_train_forward(LoopContext& loop, TrainIter& iter) override;
  void after_train(LoopContext& loop) override;

  std::int64_t skipped() const { return skipped_; }

 private:
  std::vector<std::string> gather(LoopContext& loop, const std::string& mine) const;

  InvalidLossHookOptions options_;
  TrainLog& log_;
  GatherReports gather_;
  std::int64_t skipped_ = 0;
};

// "" when the total and every term are finite, else "loss=nan loss_cls=inf ..." (every term).
std::string describe_invalid_loss(const LossMap& losses, const at::Tensor& total);

}  // namespace ddp3d::engine
