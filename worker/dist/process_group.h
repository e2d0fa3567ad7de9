// Process-group set-up for one rank: c10d TCPStore rendezvous at MASTER_ADDR:MASTER_PORT
// (rank 0 hosts it), then a Gloo backend on CPU or an NCCL backend when built with CUDA and
// the rank owns a GPU.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "worker/dist/dist_env.h"
#include "worker/dist/heartbeat_monitor.h"

namespace c10d {
class Backend;
}  // namespace c10d

namespace ddp3d::dist {

class SharedMemoryAllReduce;

enum class BackendKind { kGloo, kNccl };

struct ProcessGroupOptions {
  BackendKind backend = BackendKind::kGloo;
  // How long a rank waits for the rendezvous (store connect and all ranks joining), and the
  // collective timeout.
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  // Gloo groups with several ranks per node also get a shared-memory all-reduce, which DDP
  // uses for gradients (docs/ddp.md): inside a node through shared memory, between nodes over
  // Gloo (each local rank sums its part with its peers on the other nodes). If a rank cannot
  // map its segment, every rank falls back to Gloo with a warning.
  bool shared_memory_allreduce = true;
  // Peer heartbeats through the store (worker/dist/peer_heartbeat.h); a lost peer ends this
  // rank with exit_code::kPeerLost. Off with a zero timeout or one rank.
  HeartbeatOptions heartbeat;
};

// A connected process group. Holds the store alive for the life of the group.
class ProcessGroup {
 public:
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  BackendKind kind() const { return kind_; }
  c10d::Backend& backend();
  // The shared-memory (node-local, or hierarchical) all-reduce, or null (see
  // ProcessGroupOptions).
  SharedMemoryAllReduce* shared_memory_allreduce();
  // Blocks until every rank arrives (a collective on a one-element tensor).
  void barrier();
  // The group's orderly end: a barrier, then the heartbeat leaves, so that peers do not take
  // this rank's exit for a loss. Without it (an exception), the peers stop with kPeerLost.
  void finish();

  struct Impl;  // opaque: the store and backends, defined in process_group.cpp

 private:
  friend std::unique_ptr<ProcessGroup> init_process_group(const DistEnv&,
                                                          const ProcessGroupOptions&);
  ProcessGroup(int rank, int size, BackendKind kind, std::unique_ptr<Impl> impl);
  int rank_;
  int size_;
  BackendKind kind_;
  std::unique_ptr<Impl> impl_;
};

// Rendezvous and backend creation. Throws std::runtime_error naming MASTER_ADDR:MASTER_PORT
// and the timeout when the rendezvous does not complete in time.
std::unique_ptr<ProcessGroup> init_process_group(const DistEnv& env,
                                                 const ProcessGroupOptions& options);

// "gloo" or "nccl"; throws std::invalid_argument for anything else.
BackendKind parse_backend(const std::string& name);
std::string backend_name(BackendKind kind);

}  // namespace ddp3d::dist
