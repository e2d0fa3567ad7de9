// An all-reduce for CPU ranks on one node through a shared-memory segment, used by DDP for
// gradient buckets instead of Gloo's TCP loopback (see docs/ddp.md, "Intra-node transport").
//
// Why: over loopback TCP every byte is copied into and out of the kernel on both sides and
// summed by Gloo's threads. Here each rank sums its own 1/W of the data straight from the
// other ranks' memory (reduce-scatter), then copies the other ranks' reduced parts (all-gather):
// about 1/5 of the memory traffic, no system calls but a futex per phase. That matters when
// the ranks have no spare cores: communication then takes CPU time from compute.
//
// Protocol (per piece of at most slot_bytes, double-buffered so that consecutive pieces
// need no third barrier):
//   1. each rank copies its piece into its own slot;             barrier
//   2. rank r sums part r of every rank's slot (the reduced part
//      goes into its slot and its own tensor);                   barrier
//   3. rank r copies part j of rank j's slot into its tensor, for every j != r.
// A barrier is one counter per rank in the segment: a rank stores its count and wakes
// waiters (futex); waiters spin briefly, then sleep on the peer's counter.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace c10d {
class Store;
}  // namespace c10d

namespace ddp3d::dist {

// Completion of one asynchronous shared-memory all-reduce.
class ShmAllReduceWork {
 public:
  virtual ~ShmAllReduceWork() = default;
  // Blocks until the all-reduce finished; rethrows its error (a peer that died or timed out).
  virtual void wait() = 0;
  // When the all-reduce finished on this rank (valid after wait() returned).
  virtual std::chrono::steady_clock::time_point finished_at() const = 0;
};

class SharedMemoryAllReduce {
 public:
  struct Options {
    // How long a rank waits for a peer at one barrier before failing.
    std::chrono::milliseconds timeout{std::chrono::seconds(300)};
    // Bytes of one rank's slot; the segment holds 2 slots per rank. Larger tensors go
    // through in pieces of this size. See default_slot_bytes.
    std::size_t slot_bytes = std::size_t{4} << 20;
    // Key prefix in the store (the segment's name and each rank's verdict go there).
    std::string store_prefix = "ddp3d/shm/";
  };

  // 4 MiB per slot, less for many ranks so that the slots stay within 32 MiB: container
  // runtimes give /dev/shm 64 MiB by default.
  static std::size_t default_slot_bytes(int world);

  // Collective over `store` (which must outlive the object): every rank of the group calls it. Rank
  // 0 creates the segment, the others map it. When any rank cannot (no /dev/shm space, another host
  // or container), every rank returns nullptr and `why` (if given) says which rank failed and why.
  static std::unique_ptr<SharedMemoryAllReduce> connect(c10d::Store& store, int rank, int world,
                                                        const Options& options,
                                                        std::string* why = nullptr);
  ~SharedMemoryAllReduce();
  SharedMemoryAllReduce(const SharedMemoryAllReduce&) = delete;
  SharedMemoryAllReduce& operator=(const SharedMemoryAllReduce&) = delete;

  // Collective: one tensor per (numel, dtype: float or double), zero-filled, in this rank's
  // region of a new segment that the peers map too. allreduce() of such a tensor reads the
  // peers' copies in place instead of copying through the slots (less than half the memory
  // traffic); DDP allocates its gradient buckets here. Returns an empty vector on every rank,
  // with `why`, when any rank cannot map the segment.
  std::vector<at::Tensor> allocate_shared(
      const std::vector<std::pair<std::int64_t, at::ScalarType>>& specs,
      std::string* why = nullptr);

  // Several nodes: each rank's node-local sum of its part is summed across the nodes by
  // `sum_across_nodes` (called on this object's thread, in the same order on every rank: the
  // ranks with the same local rank form one group per part), and averages divide by the
  // whole world (local world x nodes). Call before the first allreduce.
  void set_inter_node_sum(std::function<void(at::Tensor&)> sum_across_nodes, int nodes);
  int nodes() const;

  // True for what allreduce takes: a contiguous CPU float or double tensor.
  static bool supports(const at::Tensor& tensor);

  // Sums `flat` over the ranks in place, then divides its first `average_numel` elements by
  // the world size. Asynchronous: runs on this object's thread, all-reduces complete in the
  // order they were issued, and every rank must issue the same sequence.
  std::shared_ptr<ShmAllReduceWork> allreduce(const at::Tensor& flat, std::int64_t average_numel);

  int rank() const;
  int world() const;
  // All-reduces completed so far that read peers' shared tensors in place (the rest went
  // through the slots).
  std::int64_t in_place_allreduces() const;
  std::size_t segment_bytes() const;

  struct Impl;

 private:
  explicit SharedMemoryAllReduce(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddp3d::dist
