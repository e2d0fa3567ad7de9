// The c10d backend DDP hands its gradient buckets to, as PyTorch's reducer hands them to a
// ProcessGroup: an all-reduce that sums or averages one tensor, whatever carries it. CPU float
// and double tensors of ranks on one node go through the shared-memory all-reduce
// (shm_allreduce.h), which divides as it sums; everything else through the process group's own
// backend (Gloo, NCCL), which sums, and is divided when its work completes. Every all-reduce
// returns a ReduceWork that says when it finished.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <string>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <utility>
#include <vector>

namespace ddp3d::dist {

class SharedMemoryAllReduce;

// One all-reduce of an AveragingBackend.
class ReduceWork : public c10d::Work {
 public:
  // When the all-reduce finished on this rank (valid after wait() returned).
  virtual std::chrono::steady_clock::time_point finished_at() const = 0;
};

class AveragingBackend : public c10d::Backend {
 public:
  // `inner`: the process group's backend; `shm`: its shared-memory all-reduce, or null. Both
  // must outlive this object.
  AveragingBackend(c10d::Backend& inner, SharedMemoryAllReduce* shm, int rank, int size);

  const std::string getBackendName() const override { return "ddp3d_averaging"; }

  // One tensor, reduceOp SUM or AVG (std::invalid_argument otherwise). Asynchronous; every
  // rank must issue the same sequence.
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  // The same, typed.
  c10::intrusive_ptr<ReduceWork> reduce(const at::Tensor& tensor, c10d::ReduceOp::RedOpType op);

  // Whether reduce() takes `tensor` through shared memory.
  bool in_shared_memory(const at::Tensor& tensor) const;
  // Collective: zero-filled tensors that the shared-memory all-reduce reads from the peers in
  // place (one per spec). Empty, with `why`, when any rank cannot have them or there is no
  // shared-memory all-reduce.
  std::vector<at::Tensor> allocate_shared(
      const std::vector<std::pair<std::int64_t, at::ScalarType>>& specs, std::string* why);

 private:
  c10d::Backend& inner_;
  SharedMemoryAllReduce* shm_;
};

}  // namespace ddp3d::dist
