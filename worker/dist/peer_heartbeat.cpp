#include "worker/dist/peer_heartbeat.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "common/exit_codes.h"
#include "common/log.h"

namespace ddp3d::dist {
namespace {

using Clock = HeartbeatMonitor::Clock;

std::string this_host() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

std::string heartbeat_key(int rank) {
  return "ddp3d/heartbeat/" + std::to_string(rank);
}

std::vector<std::uint8_t> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

}  // namespace

void exit_peer_lost(const std::string& message) {
  // log::write flushes stderr; _Exit skips atexit handlers and static destructors, which
  // would tear down objects the wedged main thread (or Gloo's threads) still use. The kernel
  // closes the sockets and unmaps shared memory (its name is unlinked once every rank mapped
  // it), and checkpoints are renamed into place whole, so nothing half-written is left.
  log::error(message + "; stopping with exit code " + std::to_string(exit_code::kPeerLost));
  std::_Exit(exit_code::kPeerLost);
}

struct PeerHeartbeat::State {
  State(c10::intrusive_ptr<c10d::Store> s, int r, int world, const HeartbeatOptions& o,
        std::string endpoint, OnLost lost)
      : store(std::move(s)),
        rank(r),
        world_size(world),
        options(o),
        store_endpoint(std::move(endpoint)),
        on_lost(lost ? std::move(lost) : OnLost(exit_peer_lost)),
        host(this_host()),
        monitor(r, world, o.timeout, Clock::now()) {}

  void beat_loop();
  bool stopping_now() {
    std::lock_guard lock(mutex);
    return stopping;
  }
  void watch_loop();
  // One round: publish our record, read the peers'. Throws what the store throws.
  void beat_once(long long counter);

  const c10::intrusive_ptr<c10d::Store> store;
  const int rank;
  const int world_size;
  const HeartbeatOptions options;
  const std::string store_endpoint;
  const OnLost on_lost;
  const std::string host;
  std::vector<std::string> peer_keys;
  bool peers_published = false;  // every peer's key exists (multiGet would block otherwise)

  std::mutex mutex;
  std::condition_variable changed;
  HeartbeatMonitor monitor;  // guarded by mutex, as are the flags below
  bool stopping = false;
  bool leaving = false;
  bool leave_requested = false;
  bool left_published = false;
  bool beater_done = false;
  bool watcher_done = false;
};

void PeerHeartbeat::State::beat_once(long long counter) {
  bool leave_now = false;
  {
    std::lock_guard lock(mutex);
    leave_now = leaving;
  }
  HeartbeatRecord mine{counter, leave_now, host, static_cast<long long>(::getpid())};
  store->set(heartbeat_key(rank), bytes(encode_heartbeat(mine)));
  // get and multiGet wait for a missing key: until every peer has published once, read only
  // the keys that exist, so a peer that never starts is the only one that looks silent.
  if (!peers_published) peers_published = store->check(peer_keys);
  std::vector<std::vector<std::uint8_t>> values(peer_keys.size());
  if (peers_published) {
    values = store->multiGet(peer_keys);
  } else {
    for (std::size_t i = 0; i < peer_keys.size(); ++i) {
      if (store->check({peer_keys[i]})) values[i] = store->get(peer_keys[i]);
    }
  }
  const auto now = Clock::now();
  std::lock_guard lock(mutex);
  monitor.store_answered(now);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int peer = static_cast<int>(i) < rank ? static_cast<int>(i) : static_cast<int>(i) + 1;
    const auto record = decode_heartbeat(std::string(values[i].begin(), values[i].end()));
    if (record) monitor.observe(peer, *record, now);
  }
  if (leave_now) left_published = true;
  changed.notify_all();
}

void PeerHeartbeat::State::beat_loop() {
  bool warned = false;
  for (long long counter = 1;; ++counter) {
    try {
      beat_once(counter);
    } catch (const std::exception& e) {
      // The watchdog judges the silence; say once why the store does not answer.
      if (!warned && !stopping_now()) {
        const std::string what = e.what();
        log::debug("heartbeat: store request failed: " + what.substr(0, what.find('\n')));
        warned = true;
      }
    }
    std::unique_lock lock(mutex);
    // Leaving, rank 0 waits for its peers' "left": read them sooner than every interval.
    const auto pause =
        leaving ? std::min(options.interval, std::chrono::milliseconds(50)) : options.interval;
    changed.wait_for(lock, pause, [&] { return stopping || leave_requested; });
    if (stopping) break;
    leave_requested = false;  // publish "left" now rather than after a whole interval
  }
  std::lock_guard lock(mutex);
  beater_done = true;
  changed.notify_all();
}

void PeerHeartbeat::State::watch_loop() {
  // Judged several times per interval, so a verdict comes at most a fraction of one late.
  const auto period =
      std::max(std::chrono::milliseconds(20), std::min(options.interval / 4, options.timeout / 8));
  std::unique_lock lock(mutex);
  while (!changed.wait_for(lock, period, [&] { return stopping; })) {
    if (const auto lost = monitor.lost(Clock::now())) {
      const std::string message = describe_lost_peer(*lost, options.timeout, store_endpoint);
      lock.unlock();
      on_lost(message);
      return;
    }
  }
}

PeerHeartbeat::PeerHeartbeat(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size,
                             const HeartbeatOptions& options, std::string store_endpoint,
                             OnLost on_lost)
    : state_(std::make_shared<State>(std::move(store), rank, world_size, options,
                                     std::move(store_endpoint), std::move(on_lost))) {
  for (int r = 0; r < world_size; ++r) {
    if (r != rank) state_->peer_keys.push_back(heartbeat_key(r));
  }
  State& s = *state_;
  if (options.first_round_together) {
    try {
      s.store->set(heartbeat_key(rank),
                   bytes(encode_heartbeat({0, false, s.host, static_cast<long long>(::getpid())})));
      s.store->wait(s.peer_keys, options.timeout);
      s.beat_once(0);  // no thread runs yet
    } catch (const std::exception& e) {
      const std::string what = e.what();
      log::debug("heartbeat: first round: " + what.substr(0, what.find('\n')));
    }
    std::lock_guard lock(s.mutex);
    s.monitor.restart(Clock::now());  // silence counts from here, not from before the wait
  }
  // The threads share ownership: a beater stuck in a request to a frozen store may be
  // detached at shutdown and must not outlive what it uses.
  std::thread([s = state_] { s->beat_loop(); }).detach();
  std::thread([s = state_] {
    s->watch_loop();
    std::lock_guard lock(s->mutex);
    s->watcher_done = true;
    s->changed.notify_all();
  }).detach();
}

void PeerHeartbeat::leave() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.monitor.stop_watching();
  s.leaving = true;
  s.leave_requested = true;
  s.changed.notify_all();
  const auto deadline = Clock::now() + s.options.timeout;
  s.changed.wait_until(lock, deadline, [&] {
    return s.beater_done || (s.left_published && (s.rank != 0 || s.monitor.all_peers_left()));
  });
}

PeerHeartbeat::~PeerHeartbeat() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.stopping = true;
  s.changed.notify_all();
  // A beater inside a request to a frozen store returns when the request times out; do not
  // wait for that longer than one timeout (it holds its own reference to the state).
  s.changed.wait_for(lock, s.options.timeout, [&] { return s.beater_done; });
  // The watchdog never blocks but in on_lost; after this, on_lost is not called any more.
  s.changed.wait(lock, [&] { return s.watcher_done; });
}

}  // namespace ddp3d::dist
