#include "operator/probe/progress_probe.h"

#include <algorithm>
#include <atomic>
#include <ctime>
#include <set>

namespace ddp3d::op::probe {

ProgressProbe::ProgressProbe(ProbeOptions options, Targets targets, Changed changed)
    : options_(options), targets_(std::move(targets)), changed_(std::move(changed)) {}

ProgressProbe::~ProgressProbe() {
  stop();
}

void ProgressProbe::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](const std::stop_token& stop) { loop(stop); });
}

void ProgressProbe::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

std::optional<controller::ProgressScrape> ProgressProbe::latest(const std::string& pod_uid) const {
  std::lock_guard lock(mu_);
  const auto it = latest_.find(pod_uid);
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

void ProgressProbe::loop(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    const auto next = std::chrono::steady_clock::now() + options_.interval;
    round(stop);
    std::unique_lock lock(mu_);
    wake_.wait_until(lock, stop, next, [] { return false; });
  }
}

void ProgressProbe::round(const std::stop_token& stop) {
  const std::vector<ProbeTarget> targets = targets_();
  std::vector<controller::ProgressScrape> results(targets.size());
  std::atomic<size_t> next{0};
  auto scrape_some = [&] {
    for (size_t i = next++; i < targets.size() && !stop.stop_requested(); i = next++) {
      const ProbeTarget& t = targets[i];
      const HttpBody got = fetch_metrics(t.pod_ip, t.port, options_.limits);
      controller::ProgressScrape& s = results[i];
      s.time = std::time(nullptr);
      s.error = got.error;
      if (got.error.empty()) s.metrics = controller::parse_progress_metrics(got.body);
    }
  };
  {
    const int n = std::clamp<int>(static_cast<int>(targets.size()), 0, options_.parallel);
    std::vector<std::jthread> helpers;
    for (int i = 1; i < n; ++i) helpers.emplace_back(scrape_some);
    scrape_some();
  }  // joins the helpers
  if (stop.stop_requested()) return;
  std::set<std::string> changed;
  {
    std::lock_guard lock(mu_);
    std::map<std::string, controller::ProgressScrape> fresh;
    for (size_t i = 0; i < targets.size(); ++i) {
      const auto old = latest_.find(targets[i].pod_uid);
      const bool same = old != latest_.end() && old->second.error == results[i].error &&
                        old->second.metrics == results[i].metrics;
      // An unchanged answer keeps the time it was first seen: that is when the step was.
      fresh[targets[i].pod_uid] = same ? old->second : results[i];
      if (!same) changed.insert(targets[i].job_key);
    }
    latest_ = std::move(fresh);
  }
  for (const auto& key : changed) changed_(key);
}

}  // namespace ddp3d::op::probe
