// Training progress from the ranks' scrapes, pure: the fold of the current attempt's samples
// into status.progress (step, rate, ETA) and the choice of the rank to blame for a stall.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "operator/api/training_job.h"
#include "operator/controller/observed.h"

namespace ddp3d::op::controller {

// One Running pod of the current attempt and its latest scrape (null: not scraped yet).
struct RankScrape {
  int rank = 0;
  std::string pod;
  std::string node;
  const ProgressScrape* scrape = nullptr;
};

// The scrape's step count, when it answered with a valid ddp3d_train_steps_total sample.
std::optional<int64_t> scraped_steps(const ProgressScrape* scrape);
// Why a scrape gave no step count ("" when it did), for status.nodes[].message.
std::string scrape_problem(const ProgressScrape* scrape);

// Folds `ranks` (every Running pod of `attempt`) into the stored progress. The job's step is
// the lowest over the ranks that answered (DDP ranks step together; the lowest is the truth
// for the whole gang); it advances only when that grows. lastProgressTime is the time of the
// scrape that showed the advance; the rate is smoothed over advances (an exponential average
// with weight 1/2); etaSeconds and estimatedCompletionTime count from lastProgressTime, so a
// pass with no new sample changes nothing. An advance seen within the second of the stored one
// updates the step only. A new attempt, or a step lower than the stored one
// (a resume from an older checkpoint), starts a new baseline but keeps the rate.
// Without any valid sample the stored progress is returned unchanged.
std::optional<api::TrainingProgress> fold_progress(const std::optional<api::TrainingProgress>& prev,
                                                   int attempt,
                                                   const std::vector<RankScrape>& ranks);

struct StalledRank {
  int rank = 0;
  std::string pod;
  std::string node;
  std::optional<int64_t> step;
  std::string why;  // "its /metrics did not answer: ...", "lowest step 120 of 2 ranks", ...
};

// The rank to blame when the gang stopped advancing: the first whose scrape failed, else the
// one with the lowest step (the lowest rank among equals, so rank 0 when all are equal).
// `ranks` must not be empty.
StalledRank pick_stalled_rank(const std::vector<RankScrape>& ranks);

// "45s", "12m30s", "3h05m", "2d04h".
std::string format_eta(int64_t seconds);

}  // namespace ddp3d::op::controller
