// The pure half of peer heartbeats (no store, no threads): what a rank publishes, and the
// verdict on which peer, if any, counts as lost. Time is each rank's own steady clock: a peer
// is judged by when this rank last saw its counter change, so clocks need not agree.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ddp3d::dist {

struct HeartbeatOptions {
  // How often a rank publishes its heartbeat and reads its peers'.
  std::chrono::milliseconds interval{std::chrono::seconds(2)};
  // A peer not seen beating (or the store not answering) for this long is lost; zero: off.
  std::chrono::milliseconds timeout{std::chrono::seconds(20)};
  // The first round is done before the threads start, once every peer has published (at
  // most `timeout`): from then on each rank knows every peer's host and pid. The process
  // group sets it (its ranks are all there); off for ranks constructed one after another.
  bool first_round_together = false;
  bool enabled() const { return timeout.count() > 0; }
};

// One rank's published state: a counter that rises while it lives, or `left` once it shut
// down in order (after its last collective), plus where it runs, for the error message.
struct HeartbeatRecord {
  long long counter = 0;
  bool left = false;
  std::string host;
  long long pid = 0;
};

// "<counter> <pid> <host>" or "left <pid> <host>"; decode returns nullopt for anything else.
std::string encode_heartbeat(const HeartbeatRecord& record);
std::optional<HeartbeatRecord> decode_heartbeat(const std::string& value);

struct LostPeer {
  int rank = 0;
  std::string host;  // empty when the peer never published one
  long long pid = 0;
  std::chrono::milliseconds silent{0};  // how long it has not been seen
  bool store_silent = false;            // the store (hosted by rank 0) stopped answering
};

// The message a rank dies with, naming the peer's rank and host.
std::string describe_lost_peer(const LostPeer& lost, std::chrono::milliseconds timeout,
                               const std::string& store_endpoint);

class HeartbeatMonitor {
 public:
  using Clock = std::chrono::steady_clock;

  // Every peer starts as seen at `start`, so a slow starter has one full timeout.
  HeartbeatMonitor(int rank, int world_size, std::chrono::milliseconds timeout,
                   Clock::time_point start);

  // A peer's record as read from the store at `now`; a changed counter counts as a beat.
  void observe(int peer, const HeartbeatRecord& record, Clock::time_point now);
  // The store answered a request at `now`.
  void store_answered(Clock::time_point now);
  // Every peer and the store count as seen at `now` (what they published is kept).
  void restart(Clock::time_point now);
  // Stops judging: this rank is shutting down in order.
  void stop_watching() { watching_ = false; }

  // The peer silent longest beyond the timeout; else, on ranks other than 0, a store silent
  // beyond it (blamed on rank 0, its host). Nothing once any peer has left in order (it did
  // so after the group's final barrier) or this rank stopped watching.
  std::optional<LostPeer> lost(Clock::time_point now) const;
  // True when every peer has left in order.
  bool all_peers_left() const;

 private:
  struct Peer {
    HeartbeatRecord last;
    Clock::time_point seen;
  };
  int rank_;
  std::chrono::milliseconds timeout_;
  std::vector<Peer> peers_;
  Clock::time_point store_seen_;
  bool watching_ = true;
};

}  // namespace ddp3d::dist
