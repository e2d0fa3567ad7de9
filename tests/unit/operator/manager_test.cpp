// The operator Manager's ordering with fake runnables and a fake election: what starts when,
// what stops in which order, and what a failure or a lost Lease does to the rest.
#include "operator/runtime/manager.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ddp3d::op::runtime {
namespace {

using namespace std::chrono_literals;
constexpr auto kDeadline = 10s;  // generous: only a broken Manager ever waits this long

// What happened, in order, across the Manager's and the fakes' threads.
class Journal {
 public:
  void add(const std::string& entry) {
    {
      std::lock_guard lock(mu_);
      entries_.push_back(entry);
    }
    cv_.notify_all();
  }
  std::vector<std::string> entries() const {
    std::lock_guard lock(mu_);
    return entries_;
  }
  bool contains(const std::string& entry) const {
    std::lock_guard lock(mu_);
    return contains_locked(entry);
  }
  // Waits (with a deadline) until `entry` has been recorded.
  bool wait_for(const std::string& entry) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kDeadline, [&] { return contains_locked(entry); });
  }

 private:
  bool contains_locked(const std::string& entry) const {
    for (const auto& e : entries_)
      if (e == entry) return true;
    return false;
  }
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::string> entries_;
};

class FakeRunnable : public Runnable {
 public:
  enum class Start { kOk, kThrow, kBlockUntilStop };
  FakeRunnable(std::string name, Journal& journal, Start how = Start::kOk)
      : name_(std::move(name)), journal_(journal), how_(how) {}
  std::string name() const override { return name_; }
  void start(const std::stop_token& stop) override {
    journal_.add("start " + name_);
    if (how_ == Start::kThrow) throw std::runtime_error("cannot bind");
    if (how_ == Start::kBlockUntilStop) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock lock(mu);
      cv.wait(lock, stop, [] { return false; });
    }
  }
  void stop(StopMode mode) noexcept override {
    journal_.add("stop " + name_ + (mode == StopMode::kDrain ? " (drain)" : " (abandon)"));
  }

 private:
  std::string name_;
  Journal& journal_;
  Start how_;
};

// Leads when the test grants it; loses the Lease when the test says so.
class FakeElection : public Election {
 public:
  explicit FakeElection(Journal& journal) : journal_(journal) {}
  void grant() {
    set([this] { granted_ = true; });
  }
  void lose() {
    set([this] { lost_ = true; });
  }

  void run(const std::stop_token& stop, const LeadershipCallbacks& callbacks) override {
    journal_.add("campaign");
    std::unique_lock lock(mu_);
    if (!cv_.wait(lock, stop, [this] { return granted_; })) {
      journal_.add("stopped campaigning");
      return;
    }
    lock.unlock();
    journal_.add("lead");
    callbacks.on_started_leading();
    lock.lock();
    const bool lost = cv_.wait(lock, stop, [this] { return lost_; });  // false: stopped
    lock.unlock();
    journal_.add(lost ? "lost" : "release lease");
    callbacks.on_stopped_leading();
  }

 private:
  template <class F>
  void set(F f) {
    {
      std::lock_guard lock(mu_);
      f();
    }
    cv_.notify_all();
  }
  Journal& journal_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  bool granted_ = false;
  bool lost_ = false;
};

// The Manager on a thread of its own, as main runs it.
struct Running {
  explicit Running(Manager& m)
      : result(std::async(std::launch::async, [&m, st = stop.get_token()] { return m.run(st); })) {}
  RunResult finish() {
    EXPECT_EQ(result.wait_for(kDeadline), std::future_status::ready) << "run() did not return";
    return result.get();
  }
  std::stop_source stop;
  std::future<RunResult> result;
};

using Start = FakeRunnable::Start;

void add(Manager& m, Stage stage, const std::string& name, Journal& j, Start how = Start::kOk) {
  m.add(stage, std::make_unique<FakeRunnable>(name, j, how));
}

TEST(Manager, StartsStageByStageAndStopsInReverseWithTheQueueDrained) {
  Journal j;
  Manager m;
  add(m, Stage::kLeaderOnly, "workers", j);  // added first, still started last
  add(m, Stage::kServers, "metrics", j);
  add(m, Stage::kCaches, "informers", j);
  add(m, Stage::kServers, "health", j);
  Running run(m);
  ASSERT_TRUE(j.wait_for("start workers"));
  run.stop.request_stop();
  const RunResult r = run.finish();
  EXPECT_EQ(r.outcome, RunResult::Outcome::kStopped);
  EXPECT_EQ(j.entries(), (std::vector<std::string>{"start metrics", "start health",
                                                   "start informers", "start workers",
                                                   "stop workers (drain)", "stop informers (drain)",
                                                   "stop health (drain)", "stop metrics (drain)"}));
  EXPECT_FALSE(m.ready());
}

TEST(Manager, WorkersStartOnlyWhenLeadingAndStopBeforeTheLeaseIsReleased) {
  Journal j;
  Manager m;
  add(m, Stage::kServers, "health", j);
  add(m, Stage::kCaches, "informers", j);
  add(m, Stage::kLeaderOnly, "workers", j);
  auto election = std::make_unique<FakeElection>(j);
  FakeElection& e = *election;
  m.set_election(std::move(election));
  Running run(m);
  ASSERT_TRUE(j.wait_for("campaign"));
  // A standby with synced caches is ready, and does no work: nothing starts before "lead".
  EXPECT_TRUE(m.ready());
  EXPECT_FALSE(j.contains("start workers"));
  e.grant();
  ASSERT_TRUE(j.wait_for("start workers"));
  run.stop.request_stop();
  EXPECT_EQ(run.finish().outcome, RunResult::Outcome::kStopped);
  EXPECT_EQ(j.entries(),
            (std::vector<std::string>{"start health", "start informers", "campaign", "lead",
                                      "start workers", "stop workers (drain)", "release lease",
                                      "stop informers (drain)", "stop health (drain)"}));
}

TEST(Manager, LosingTheLeaseAbandonsTheQueueAndStopsEverything) {
  Journal j;
  Manager m;
  add(m, Stage::kServers, "health", j);
  add(m, Stage::kCaches, "informers", j);
  add(m, Stage::kLeaderOnly, "workers", j);
  auto election = std::make_unique<FakeElection>(j);
  FakeElection& e = *election;
  m.set_election(std::move(election));
  Running run(m);
  e.grant();
  ASSERT_TRUE(j.wait_for("start workers"));
  e.lose();  // no stop request: the Manager must notice by itself
  const RunResult r = run.finish();
  EXPECT_EQ(r.outcome, RunResult::Outcome::kLeadershipLost);
  EXPECT_EQ(j.entries(),
            (std::vector<std::string>{"start health", "start informers", "campaign", "lead",
                                      "start workers", "lost", "stop workers (abandon)",
                                      "stop informers (drain)", "stop health (drain)"}));
}

TEST(Manager, AStandbyStopsWithoutEverStartingTheWorkers) {
  Journal j;
  Manager m;
  add(m, Stage::kCaches, "informers", j);
  add(m, Stage::kLeaderOnly, "workers", j);
  m.set_election(std::make_unique<FakeElection>(j));
  Running run(m);
  ASSERT_TRUE(j.wait_for("campaign"));
  run.stop.request_stop();
  EXPECT_EQ(run.finish().outcome, RunResult::Outcome::kStopped);
  EXPECT_EQ(j.entries(),
            (std::vector<std::string>{"start informers", "campaign", "stopped campaigning",
                                      "stop informers (drain)"}));
}

TEST(Manager, ARunnableThatFailsToStartStopsTheOthersAndIsNamed) {
  Journal j;
  Manager m;
  add(m, Stage::kServers, "metrics", j);
  add(m, Stage::kCaches, "informers", j, Start::kThrow);
  add(m, Stage::kCaches, "never", j);
  add(m, Stage::kLeaderOnly, "workers", j);
  auto election = std::make_unique<FakeElection>(j);
  m.set_election(std::move(election));
  Running run(m);
  const RunResult r = run.finish();
  EXPECT_EQ(r.outcome, RunResult::Outcome::kStartFailed);
  EXPECT_EQ(r.failed_stage, Stage::kCaches);
  EXPECT_EQ(r.error, "informers: cannot bind");
  // The failed one is stopped too (it may have started threads before throwing); nothing
  // after it starts, and no campaign begins.
  EXPECT_EQ(j.entries(),
            (std::vector<std::string>{"start metrics", "start informers", "stop informers (drain)",
                                      "stop metrics (drain)"}));
}

TEST(Manager, AStopDuringALongStartEndsItAndStartsNothingElse) {
  Journal j;
  Manager m;
  add(m, Stage::kServers, "metrics", j);
  add(m, Stage::kCaches, "informers", j, Start::kBlockUntilStop);  // a cache that never syncs
  add(m, Stage::kLeaderOnly, "workers", j);
  Running run(m);
  ASSERT_TRUE(j.wait_for("start informers"));
  EXPECT_FALSE(m.ready());
  run.stop.request_stop();
  EXPECT_EQ(run.finish().outcome, RunResult::Outcome::kStopped);
  EXPECT_EQ(j.entries(),
            (std::vector<std::string>{"start metrics", "start informers", "stop informers (drain)",
                                      "stop metrics (drain)"}));
}

TEST(Manager, AStopRequestedBeforeRunStartsNothing) {
  Journal j;
  Manager m;
  add(m, Stage::kServers, "metrics", j);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_EQ(m.run(stop.get_token()).outcome, RunResult::Outcome::kStopped);
  EXPECT_TRUE(j.entries().empty());
}

// --- a bounded shutdown: what still hangs at the grace is cut ---------------------------------

// Set once by a cut; stops that hang wait for it.
class Cut {
 public:
  void cut() {
    {
      std::lock_guard lock(mu_);
      cut_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, kDeadline, [this] { return cut_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool cut_ = false;
};

// Its stop hangs (a request that never gets an answer) until the client is cut.
class HangingRunnable : public Runnable {
 public:
  HangingRunnable(std::string name, Journal& journal, Cut& client)
      : name_(std::move(name)), journal_(journal), client_(client) {}
  std::string name() const override { return name_; }
  void start(const std::stop_token&) override { journal_.add("start " + name_); }
  void stop(StopMode) noexcept override {
    journal_.add("stop " + name_);
    client_.wait();
    journal_.add("stopped " + name_);
  }

 private:
  std::string name_;
  Journal& journal_;
  Cut& client_;
};

// Leads at once; its Lease release hangs until the election is cut.
class HangingElection : public Election {
 public:
  explicit HangingElection(Journal& journal) : journal_(journal) {}
  void run(const std::stop_token& stop, const LeadershipCallbacks& callbacks) override {
    callbacks.on_started_leading();
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait(lock, stop, [] { return false; });
    journal_.add("release lease");
    client_.wait();
    journal_.add("release cut");
    callbacks.on_stopped_leading();
  }
  void cut(const std::string& why) noexcept override {
    journal_.add("election cut: " + why);
    client_.cut();
  }

 private:
  Journal& journal_;
  Cut client_;
};

using SteadyClock = std::chrono::steady_clock;

TEST(Manager, ADrainStillGoingAtTheGraceIsCutAndTheStopGoesOn) {
  Journal j;
  Cut client;
  Manager m;
  add(m, Stage::kCaches, "informers", j);
  m.add(Stage::kLeaderOnly, std::make_unique<HangingRunnable>("workers", j, client));
  m.set_shutdown_grace(300ms);
  m.add_shutdown_cut([&](const std::string& why) {
    j.add("cut: " + why);
    client.cut();
  });
  Running run(m);
  ASSERT_TRUE(j.wait_for("start workers"));
  const auto t0 = SteadyClock::now();
  run.stop.request_stop();
  EXPECT_EQ(run.finish().outcome, RunResult::Outcome::kStopped);
  const auto took = SteadyClock::now() - t0;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2s);
  EXPECT_EQ(j.entries(), (std::vector<std::string>{
                             "start informers", "start workers", "stop workers",
                             "cut: shutting down: the graceful stop took longer than 300 ms",
                             "stopped workers", "stop informers (drain)"}));
}

TEST(Manager, ALeaseReleaseStillGoingAfterTheGraceIsCutASecondLater) {
  Journal j;
  Manager m;
  add(m, Stage::kCaches, "informers", j);
  add(m, Stage::kLeaderOnly, "workers", j);
  m.set_election(std::make_unique<HangingElection>(j));
  m.set_shutdown_grace(200ms);
  m.add_shutdown_cut([&](const std::string&) { j.add("client cut"); });
  Running run(m);
  ASSERT_TRUE(j.wait_for("start workers"));
  const auto t0 = SteadyClock::now();
  run.stop.request_stop();
  EXPECT_EQ(run.finish().outcome, RunResult::Outcome::kStopped);
  const auto took = SteadyClock::now() - t0;
  // The drain is done at once; the release gets the grace and kLeaseReleaseGrace more.
  EXPECT_GE(took, 200ms + Manager::kLeaseReleaseGrace);
  EXPECT_LT(took, 200ms + Manager::kLeaseReleaseGrace + 1s);
  EXPECT_EQ(
      j.entries(),
      (std::vector<std::string>{
          "start informers", "start workers", "stop workers (drain)", "release lease", "client cut",
          "election cut: shutting down: the graceful stop took longer than 200 ms", "release cut",
          "stop informers (drain)"}));
}

TEST(Manager, AShutdownWithinTheGraceCutsNothing) {
  Journal j;
  Manager m;
  add(m, Stage::kCaches, "informers", j);
  add(m, Stage::kLeaderOnly, "workers", j);
  auto election = std::make_unique<FakeElection>(j);
  FakeElection& e = *election;
  m.set_election(std::move(election));
  m.set_shutdown_grace(200ms);
  m.add_shutdown_cut([&](const std::string&) { j.add("client cut"); });
  Running run(m);
  e.grant();
  ASSERT_TRUE(j.wait_for("start workers"));
  const auto t0 = SteadyClock::now();
  run.stop.request_stop();
  EXPECT_EQ(run.finish().outcome, RunResult::Outcome::kStopped);
  // run() does not wait for the grace when there is nothing left to stop.
  EXPECT_LT(SteadyClock::now() - t0, 200ms);
  std::this_thread::sleep_for(400ms);
  EXPECT_FALSE(j.contains("client cut"));
}

}  // namespace
}  // namespace ddp3d::op::runtime
