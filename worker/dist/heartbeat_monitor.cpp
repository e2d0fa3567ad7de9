#include "worker/dist/heartbeat_monitor.h"

#include <charconv>
#include <cstdio>
#include <string_view>
#include <system_error>

namespace ddp3d::dist {
namespace {

// Whole-field integer parse: no sign tricks, no trailing garbage.
std::optional<long long> parse_count(std::string_view field) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (ec != std::errc() || end != field.data() + field.size() || v < 0) return std::nullopt;
  return v;
}

std::string seconds_text(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

}  // namespace

std::string encode_heartbeat(const HeartbeatRecord& record) {
  return (record.left ? std::string("left") : std::to_string(record.counter)) + " " +
         std::to_string(record.pid) + " " + record.host;
}

std::optional<HeartbeatRecord> decode_heartbeat(const std::string& value) {
  const std::string_view v(value);
  const std::size_t first = v.find(' ');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = v.find(' ', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  HeartbeatRecord r;
  const std::string_view state = v.substr(0, first);
  if (state == "left") {
    r.left = true;
  } else if (const auto counter = parse_count(state)) {
    r.counter = *counter;
  } else {
    return std::nullopt;
  }
  const auto pid = parse_count(v.substr(first + 1, second - first - 1));
  if (!pid) return std::nullopt;
  r.pid = *pid;
  r.host = std::string(v.substr(second + 1));
  return r;
}

std::string describe_lost_peer(const LostPeer& lost, std::chrono::milliseconds timeout,
                               const std::string& store_endpoint) {
  const std::string who = "rank " + std::to_string(lost.rank) + " (host " +
                          (lost.host.empty() ? std::string("unknown") : lost.host) +
                          (lost.pid > 0 ? ", pid " + std::to_string(lost.pid) : "") + ")";
  const std::string limit =
      " (env_cfg.dist_cfg.heartbeat_timeout " + seconds_text(timeout) + "): peer lost";
  if (lost.store_silent) {
    return "the rendezvous store at " + store_endpoint + ", hosted by " + who +
           ", has not answered for " + seconds_text(lost.silent) + limit;
  }
  return who + " has not heartbeated for " + seconds_text(lost.silent) + limit;
}

HeartbeatMonitor::HeartbeatMonitor(int rank, int world_size, std::chrono::milliseconds timeout,
                                   Clock::time_point start)
    : rank_(rank),
      timeout_(timeout),
      peers_(static_cast<std::size_t>(world_size), Peer{{}, start}),
      store_seen_(start) {}

void HeartbeatMonitor::observe(int peer, const HeartbeatRecord& record, Clock::time_point now) {
  if (peer < 0 || static_cast<std::size_t>(peer) >= peers_.size() || peer == rank_) return;
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (record.left != p.last.left || record.counter != p.last.counter) p.seen = now;
  p.last = record;
}

void HeartbeatMonitor::store_answered(Clock::time_point now) {
  store_seen_ = now;
}

void HeartbeatMonitor::restart(Clock::time_point now) {
  for (Peer& p : peers_) p.seen = now;
  store_seen_ = now;
}

std::optional<LostPeer> HeartbeatMonitor::lost(Clock::time_point now) const {
  if (!watching_) return std::nullopt;
  // A peer leaves only after the group's final barrier: the collectives are over, and once
  // rank 0 is gone so is the store, through which the others see each other.
  for (const Peer& p : peers_) {
    if (p.last.left) return std::nullopt;
  }
  std::optional<LostPeer> worst;
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    const Peer& p = peers_[r];
    if (static_cast<int>(r) == rank_) continue;
    const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.seen);
    if (silent > timeout_ && (!worst || silent > worst->silent)) {
      worst = LostPeer{static_cast<int>(r), p.last.host, p.last.pid, silent, false};
    }
  }
  const auto store_silent =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - store_seen_);
  // Rank 0 hosts the store: when the silent peer is rank 0 and the store has not answered
  // for a while either, the store is what went away with it (SIGSTOP, a lost host).
  if (worst && worst->rank == 0 && rank_ != 0 && store_silent > timeout_ / 2) {
    worst->store_silent = true;
    return worst;
  }
  if (worst) return worst;
  // When rank 0 is frozen no read returns, so no peer ever looks stale: the store's silence
  // is the verdict. (On rank 0 the store is in-process; a stuck store there shows as silent
  // peers.)
  if (rank_ == 0) return std::nullopt;
  if (store_silent > timeout_) {
    const Peer& host = peers_[0];
    return LostPeer{0, host.last.host, host.last.pid, store_silent, true};
  }
  return std::nullopt;
}

bool HeartbeatMonitor::all_peers_left() const {
  for (std::size_t r = 0; r < peers_.size(); ++r) {
    if (static_cast<int>(r) != rank_ && !peers_[r].last.left) return false;
  }
  return true;
}

}  // namespace ddp3d::dist
