#include "operator/controller/progress.h"

#include <algorithm>
#include <cmath>

#include "operator/api/timestamps.h"

namespace ddp3d::op::controller {

namespace {

// An ETA beyond this (ten years) is shown as such, never as an overflowing time.
constexpr int64_t kMaxEtaSeconds = int64_t{10} * 365 * 24 * 3600;

// Rates are stored rounded, so that the status written and read back compares equal.
double round_rate(double r) {
  return std::round(r * 1000.0) / 1000.0;
}

void set_eta(api::TrainingProgress* p) {
  p->eta_seconds.reset();
  p->estimated_completion_time.reset();
  p->eta.clear();
  if (!p->max_steps || !p->steps_per_second || *p->steps_per_second <= 0) return;
  const int64_t left = std::max<int64_t>(*p->max_steps - p->step, 0);
  const double secs = std::ceil(static_cast<double>(left) / *p->steps_per_second);
  const int64_t eta =
      secs >= static_cast<double>(kMaxEtaSeconds) ? kMaxEtaSeconds : static_cast<int64_t>(secs);
  p->eta_seconds = eta;
  p->eta = format_eta(eta);
  if (const auto since = api::parse_rfc3339(p->last_progress_time)) {
    p->estimated_completion_time = api::format_rfc3339(*since + eta);
  }
}

std::optional<int64_t> as_count(const std::optional<double>& v) {
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

}  // namespace

std::optional<int64_t> scraped_steps(const ProgressScrape* scrape) {
  if (!scrape || !scrape->error.empty()) return std::nullopt;
  return as_count(scrape->metrics.steps);
}

std::string scrape_problem(const ProgressScrape* scrape) {
  if (!scrape) return "metrics not scraped yet";
  if (!scrape->error.empty()) return "metrics: " + scrape->error;
  if (!scrape->metrics.steps) {
    return "metrics: no valid " + std::string(kStepsSeries) + " sample";
  }
  return "";
}

std::optional<api::TrainingProgress> fold_progress(const std::optional<api::TrainingProgress>& prev,
                                                   int attempt,
                                                   const std::vector<RankScrape>& ranks) {
  const RankScrape* lowest = nullptr;
  api::UnixSeconds sampled = 0;
  for (const auto& r : ranks) {
    const auto steps = scraped_steps(r.scrape);
    if (!steps) continue;
    sampled = std::max(sampled, r.scrape->time);
    if (!lowest || *steps < *scraped_steps(lowest->scrape)) lowest = &r;
  }
  if (!lowest) return prev;
  const int64_t step = *scraped_steps(lowest->scrape);
  const ProgressMetrics& m = lowest->scrape->metrics;
  api::TrainingProgress p = prev.value_or(api::TrainingProgress{});
  const bool new_baseline = !prev || prev->attempt != attempt || step < prev->step;
  if (new_baseline) {
    p.attempt = attempt;
    p.step = step;
    p.last_progress_time = api::format_rfc3339(sampled);
  } else if (step > p.step) {
    const auto since = api::parse_rfc3339(p.last_progress_time);
    // Within the stored second (timestamps are whole seconds) there is no rate to compute;
    // the step is taken and the next advance measures from that same second.
    if (since && sampled > *since) {
      const double rate =
          static_cast<double>(step - p.step) / static_cast<double>(sampled - *since);
      p.steps_per_second =
          round_rate(p.steps_per_second ? (*p.steps_per_second + rate) / 2.0 : rate);
      p.last_progress_time = api::format_rfc3339(sampled);
    }
    p.step = step;
  }
  p.epoch = as_count(m.epoch);
  p.max_steps = as_count(m.max_steps);
  set_eta(&p);
  return p;
}

StalledRank pick_stalled_rank(const std::vector<RankScrape>& ranks) {
  const RankScrape* blamed = nullptr;
  std::string why;
  for (const auto& r : ranks) {
    if (!scraped_steps(r.scrape)) {
      if (!blamed || scraped_steps(blamed->scrape) || r.rank < blamed->rank) {
        blamed = &r;
        why = "its " + scrape_problem(r.scrape);
      }
      continue;
    }
    if (blamed && !scraped_steps(blamed->scrape)) continue;  // a silent rank is blamed first
    const auto steps = scraped_steps(r.scrape);
    if (!blamed || *steps < *scraped_steps(blamed->scrape) ||
        (*steps == *scraped_steps(blamed->scrape) && r.rank < blamed->rank)) {
      blamed = &r;
    }
  }
  StalledRank out;
  if (!blamed) return out;  // no ranks: nobody to blame
  out.rank = blamed->rank;
  out.pod = blamed->pod;
  out.node = blamed->node;
  out.step = scraped_steps(blamed->scrape);
  if (out.step) {
    bool all_equal = true;
    for (const auto& r : ranks) all_equal = all_equal && scraped_steps(r.scrape) == out.step;
    why = all_equal ? "every rank is at step " + std::to_string(*out.step)
                    : "the lowest step, " + std::to_string(*out.step);
  }
  out.why = why;
  return out;
}

std::string format_eta(int64_t seconds) {
  seconds = std::max<int64_t>(seconds, 0);
  auto two = [](int64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  const int64_t d = seconds / 86400;
  const int64_t h = seconds % 86400 / 3600;
  const int64_t m = seconds % 3600 / 60;
  const int64_t s = seconds % 60;
  if (d > 0) return std::to_string(d) + "d" + two(h) + "h";
  if (h > 0) return std::to_string(h) + "h" + two(m) + "m";
  if (m > 0) return std::to_string(m) + "m" + two(s) + "s";
  return std::to_string(s) + "s";
}

}  // namespace ddp3d::op::controller
