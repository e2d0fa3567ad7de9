// The operator's lifecycle in one place, in the spirit of controller-runtime's Manager:
//
//   start:  servers (metrics, probes) -> caches (informers, synced) -> campaign for the Lease
//           (if an Election is set) -> leader-only runnables (the workers)
//   stop:   on a stop request (SIGTERM/SIGINT), on losing leadership, or when something
//           fails to start: leader-only runnables (drained, or abandoned when leadership was
//           lost) -> the election (which releases a held Lease) -> caches -> servers
//
// Within a stage runnables start in the order added and stop in reverse. run() returns only
// after every started runnable has stopped and the election thread has been joined.
//
// A shutdown can be bounded (set_shutdown_grace): when stopping has not finished `grace`
// after it began, the cuts run (the operator's: Client::abort, so requests in flight fail and
// exec credential plugins are killed) and whatever still waits returns promptly; the Lease
// release gets kLeaseReleaseGrace more, then Election::cut() ends it too.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "operator/runtime/election.h"
#include "operator/runtime/runnable.h"

namespace ddp3d::op::runtime {

enum class Stage { kServers, kCaches, kLeaderOnly };

struct RunResult {
  enum class Outcome {
    kStopped,         // a stop was requested: everything drained and stopped
    kStartFailed,     // `error` names the runnable that could not start
    kLeadershipLost,  // the Lease was lost (or the election ended) without a stop request
  };
  Outcome outcome = Outcome::kStopped;
  std::string error;
  Stage failed_stage = Stage::kServers;  // for kStartFailed
};

class Manager {
 public:
  Manager() = default;
  ~Manager();
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // Before run().
  void add(Stage stage, std::unique_ptr<Runnable> runnable);
  // Without an election, the leader-only runnables start right after the caches.
  void set_election(std::unique_ptr<Election> election);
  // Bounds every shutdown (see above); without it a shutdown waits as long as stopping takes.
  void set_shutdown_grace(std::chrono::milliseconds grace);
  // Run (on the Manager's shutdown watchdog thread, while the runnables are being stopped)
  // once the grace is spent; `why` says so, for the errors the cut causes. Must be
  // thread-safe, must not throw, and must make the runnables' stop() return promptly.
  void add_shutdown_cut(std::function<void(const std::string& why)> cut);

  // How long the Lease release may take past the grace before it is cut.
  static constexpr std::chrono::milliseconds kLeaseReleaseGrace{1000};

  // Blocks until stopped (see above). Call once.
  RunResult run(const std::stop_token& stop);

  // For /readyz: true once the caches have synced and the process is either waiting for
  // the Lease (a standby is doing its job) or running its workers; false while starting
  // or stopping.
  bool ready() const { return ready_.load(); }

 private:
  struct Entry {
    Stage stage;
    std::unique_ptr<Runnable> runnable;
  };
  // Starts every runnable of `stage`; false if one failed (`result` says which) or a stop
  // came meanwhile.
  bool start_stage(Stage stage, const std::stop_token& stop, RunResult& result);
  void start_election();
  void stop_election();
  void stop_last(StopMode mode);  // the most recently started runnable still running
  // The watchdog of a bounded shutdown: cuts what is still stopping at the grace and the
  // election kLeaseReleaseGrace later, unless `done` is requested first.
  void watch_shutdown(const std::stop_token& done, std::chrono::steady_clock::time_point began);
  void set_stopping(std::string what);
  // Stops what was started, in the order described above.
  void shut_down(StopMode leader_mode);
  struct Events {
    bool stop_requested;
    bool leading;
  };
  // Waits for a stop request, the end of the election, or (when not yet `leading`) for
  // leadership.
  Events wait_for_event(bool leading);

  std::vector<Entry> entries_;
  std::vector<const Entry*> started_;  // start order (entries_ does not change during run())
  std::unique_ptr<Election> election_;
  std::jthread election_thread_;
  std::atomic<bool> ready_{false};
  std::optional<std::chrono::milliseconds> shutdown_grace_;
  std::vector<std::function<void(const std::string&)>> shutdown_cuts_;
  std::mutex stopping_mu_;
  std::string stopping_;  // what shut_down() is stopping now, for the watchdog's log

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  bool leading_ = false;
  bool election_done_ = false;
};

const char* to_string(Stage stage);

}  // namespace ddp3d::op::runtime
