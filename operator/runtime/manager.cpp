#include "operator/runtime/manager.h"

#include <condition_variable>
#include <exception>
#include <string>
#include <utility>

#include "common/log.h"

namespace ddp3d::op::runtime {

const char* to_string(Stage stage) {
  switch (stage) {
    case Stage::kServers:
      return "servers";
    case Stage::kCaches:
      return "caches";
    case Stage::kLeaderOnly:
      return "leader-only";
  }
  return "?";
}

namespace {
std::string duration_text(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s"
                               : std::to_string(d.count()) + " ms";
}
}  // namespace

Manager::~Manager() {
  // run() joins it on every path; this covers a Manager destroyed without run().
  stop_election();
}

void Manager::add(Stage stage, std::unique_ptr<Runnable> runnable) {
  entries_.push_back({stage, std::move(runnable)});
}

void Manager::set_election(std::unique_ptr<Election> election) {
  election_ = std::move(election);
}

void Manager::set_shutdown_grace(std::chrono::milliseconds grace) {
  shutdown_grace_ = grace;
}

void Manager::add_shutdown_cut(std::function<void(const std::string& why)> cut) {
  shutdown_cuts_.push_back(std::move(cut));
}

bool Manager::start_stage(Stage stage, const std::stop_token& stop, RunResult& result) {
  for (auto& entry : entries_) {
    if (entry.stage != stage) continue;
    if (stop.stop_requested()) return false;
    Runnable* r = entry.runnable.get();
    log::info("starting " + r->name());
    // Recorded before start() so a runnable that throws half-way is stopped too.
    started_.push_back(&entry);
    try {
      r->start(stop);
    } catch (const std::exception& e) {
      result.outcome = RunResult::Outcome::kStartFailed;
      result.failed_stage = stage;
      result.error = r->name() + ": " + e.what();
      log::error("could not start " + result.error);
      return false;
    }
  }
  return !stop.stop_requested();
}

void Manager::start_election() {
  LeadershipCallbacks callbacks;
  callbacks.on_started_leading = [this] {
    {
      std::lock_guard lock(mu_);
      leading_ = true;
    }
    cv_.notify_all();
  };
  callbacks.on_stopped_leading = [] {};  // election_done_ (below) covers it
  election_thread_ = std::jthread([this, callbacks](const std::stop_token& st) {
    try {
      election_->run(st, callbacks);
    } catch (const std::exception& e) {
      log::error(std::string("leader election failed: ") + e.what());
    }
    {
      std::lock_guard lock(mu_);
      election_done_ = true;
    }
    cv_.notify_all();
  });
}

void Manager::stop_election() {
  if (!election_thread_.joinable()) return;
  // The election releases a held Lease before it returns; its API calls are bounded by the
  // client's request timeout, so this join is bounded too.
  election_thread_.request_stop();
  election_thread_.join();
}

Manager::Events Manager::wait_for_event(bool leading) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stop_requested_ || election_done_ || (!leading && leading_); });
  // A copy: acting on it (joining the election thread) must not hold the lock it takes.
  return {stop_requested_, leading_};
}

void Manager::set_stopping(std::string what) {
  std::lock_guard lock(stopping_mu_);
  stopping_ = std::move(what);
}

void Manager::watch_shutdown(const std::stop_token& done,
                             std::chrono::steady_clock::time_point began) {
  std::mutex mu;
  std::condition_variable_any cv;
  // True when shut_down() finished before `until`.
  auto finished_by = [&](std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(mu);
    cv.wait_until(lock, done, until, [] { return false; });
    return done.stop_requested();
  };
  auto stopping = [this] {
    std::lock_guard lock(stopping_mu_);
    return stopping_;
  };
  const auto grace = *shutdown_grace_;
  if (finished_by(began + grace)) return;
  const std::string why =
      "shutting down: the graceful stop took longer than " + duration_text(grace);
  log::warning("still stopping the " + stopping() + " " + duration_text(grace) +
               " after the shutdown began (--shutdown-grace-seconds); cutting the drain short: "
               "API requests in flight fail at once and a running exec credential plugin is "
               "killed");
  for (const auto& cut : shutdown_cuts_) cut(why);
  if (!election_ || finished_by(began + grace + kLeaseReleaseGrace)) return;
  log::warning("still stopping the " + stopping() + " " +
               duration_text(grace + kLeaseReleaseGrace) +
               " after the shutdown began; cutting the leader election short (a Lease not "
               "released expires by itself)");
  election_->cut(why);
}

void Manager::stop_last(StopMode mode) {
  Runnable& r = *started_.back()->runnable;
  set_stopping(r.name());
  log::info("stopping " + r.name());
  r.stop(mode);
  started_.pop_back();
}

void Manager::shut_down(StopMode leader_mode) {
  ready_ = false;
  // Joined (after a stop request) when this returns: its cuts never outlive the shutdown.
  std::jthread watchdog;
  if (shutdown_grace_) {
    watchdog = std::jthread([this, began = std::chrono::steady_clock::now()](
                                const std::stop_token& done) { watch_shutdown(done, began); });
  }
  // Reconciling stops before the Lease is released, so a successor never overlaps with us.
  while (!started_.empty() && started_.back()->stage == Stage::kLeaderOnly) {
    stop_last(leader_mode);
  }
  if (election_thread_.joinable()) set_stopping("leader election (releasing the Lease)");
  stop_election();
  while (!started_.empty()) stop_last(StopMode::kDrain);
}

RunResult Manager::run(const std::stop_token& stop) {
  std::stop_callback on_stop(stop, [this] {
    {
      std::lock_guard lock(mu_);
      stop_requested_ = true;
    }
    cv_.notify_all();
  });
  RunResult result;
  auto finish = [&](StopMode mode) {
    shut_down(mode);
    return result;
  };

  if (!start_stage(Stage::kServers, stop, result)) return finish(StopMode::kDrain);
  if (!start_stage(Stage::kCaches, stop, result)) return finish(StopMode::kDrain);

  if (election_) {
    ready_ = true;  // a standby with synced caches is ready: waiting is its job
    start_election();
    const Events seen = wait_for_event(/*leading=*/false);
    if (seen.stop_requested) return finish(StopMode::kDrain);
    if (!seen.leading) {
      result.outcome = RunResult::Outcome::kLeadershipLost;
      result.error = "leader election ended before this process led";
      return finish(StopMode::kAbandon);
    }
    ready_ = false;
  }
  if (!start_stage(Stage::kLeaderOnly, stop, result)) return finish(StopMode::kDrain);
  ready_ = true;

  if (wait_for_event(/*leading=*/true).stop_requested) return finish(StopMode::kDrain);
  result.outcome = RunResult::Outcome::kLeadershipLost;
  result.error = "lost the leader Lease";
  log::error(
      "lost the leader Lease; stopping at once so this process cannot act alongside the new "
      "leader");
  return finish(StopMode::kAbandon);
}

}  // namespace ddp3d::op::runtime
