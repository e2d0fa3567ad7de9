// Peer heartbeats through the rendezvous store (docs/ddp.md, "Lost peers"): every rank
// publishes a rising counter every interval and reads its peers'; a peer whose counter stops
// (SIGSTOP, a wedged host, a vanished node) or a store that stops answering (rank 0, its host,
// frozen) ends this rank with exit_code::kPeerLost within the timeout, naming the peer's rank
// and host, even while the main thread is blocked inside a collective.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <functional>
#include <memory>
#include <string>

#include "worker/dist/heartbeat_monitor.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace ddp3d::dist {

class PeerHeartbeat {
 public:
  // Called once, on the watchdog thread, with the message naming the lost peer. The default
  // logs it and ends the process with _Exit(kPeerLost): the main thread may be wedged in a
  // collective holding locks, so neither unwinding it nor running exit handlers is safe.
  using OnLost = std::function<void(const std::string& message)>;

  // Starts beating and watching on two threads of their own. `store` should be a connection
  // used by nothing else (TCPStore::clone()): a request queued behind the main thread's would
  // look like a silent store. `store_endpoint` ("host:port") is for the message only.
  PeerHeartbeat(c10::intrusive_ptr<c10d::Store> store, int rank, int world_size,
                const HeartbeatOptions& options, std::string store_endpoint, OnLost on_lost = {});
  // Stops both threads. Without leave() first, the peers see this rank go silent and stop
  // too (after a failure, that is what should happen).
  ~PeerHeartbeat();
  PeerHeartbeat(const PeerHeartbeat&) = delete;
  PeerHeartbeat& operator=(const PeerHeartbeat&) = delete;

  // An orderly stop, after the group's final barrier: publishes "left" and stops judging
  // peers. Rank 0 then waits (at most the timeout) for every peer to leave, so that its store
  // outlives their last request. Never blocks longer than about the timeout.
  void leave();

  struct State;  // shared with the threads, defined in peer_heartbeat.cpp

 private:
  std::shared_ptr<State> state_;
};

// Logs `message` as an error and ends the process with exit_code::kPeerLost at once.
[[noreturn]] void exit_peer_lost(const std::string& message);

}  // namespace ddp3d::dist
