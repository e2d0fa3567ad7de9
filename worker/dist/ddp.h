// DistributedDataParallel for LibTorch C++ modules: the C++ counterpart of
// torch.nn.parallel.DistributedDataParallel, written for ddp3d (LibTorch ships none, and
// c10d::Reducer is not usable from C++ across versions). See docs/ddp.md.
//
// Per step (the order PyTorch's DDP uses internally):
//
//   ddp::DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 25});
//   for (...) {
//     ddp.prepare_forward();               // checks the last step finished; broadcasts buffers
//     auto out = model->forward(batch);
//     auto loss = criterion(out, target);
//     ddp.prepare_backward({loss});        // arms the hooks; with find_unused_parameters,
//                                          // finds parameters the outputs do not reach
//     loss.backward();                     // bucket all-reduces launch from autograd hooks,
//                                          // overlapping the rest of backward; the end of
//                                          // backward waits and writes averaged gradients
//     ddp.finalize_backward();             // no-op if backward already finalized; returns stats
//     optimizer.step();
//   }
//
// Gradient accumulation: steps under `auto guard = ddp.no_sync();` keep gradients local;
// the next synchronised backward reduces the accumulated sum.
//
// Every error detected in a step (a parameter without a gradient, a missed finalize) is
// detected on every rank at the same point, so no rank is left waiting in a collective.
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace ddp3d::dist {

class ProcessGroup;

struct DdpOptions {
  // Gradient bucket size in MiB (PyTorch's bucket_cap_mb). Buckets fill in reverse parameter
  // order, which approximates the order gradients become ready in backward.
  double bucket_cap_mb = 25.0;
  // The first bucket (the last parameters) is kept small so its all-reduce starts early.
  double first_bucket_cap_mb = 1.0;
  // True: after forward, parameters that took no part in the outputs are marked ready with a
  // zero contribution (and, if unused on every rank, keep an undefined gradient, as in
  // PyTorch). False: such a parameter is an error naming it.
  bool find_unused_parameters = false;
  // Broadcast module buffers (e.g. BatchNorm running stats) from rank 0 before each forward.
  bool broadcast_buffers = true;
  // True: after finalize, param.grad() is an alias of the parameter's bucket slice, so the
  // averaged gradient is never copied back (and a gradient accumulated in place lands in
  // the bucket directly). The alias is not an autograd view, so LibTorch's
  // Optimizer::zero_grad (which calls detach_()) works; but the gradient's memory is
  // rewritten by the next synchronised backward, so copy it if you keep it across steps.
  // False: averaged gradients are copied into separate gradient tensors (PyTorch's default).
  bool gradient_as_bucket_view = true;
  // Rank whose parameters and buffers are authoritative.
  int broadcast_from_rank = 0;
  // All-reduce CPU float/double buckets through the process group's shared-memory
  // all-reduce when it has one (ranks on one node, Gloo), instead of the backend.
  bool shared_memory_allreduce = true;
};

// One bucket all-reduce, for instrumentation (tests check overlap with it).
struct BucketEvent {
  int bucket = 0;                                  // bucket index (0 = launched first)
  std::chrono::steady_clock::time_point launched;  // all-reduce handed to the backend
  bool launched_in_backward = true;  // false: launched by finalize (unused parameters)
  // When the all-reduce finished: for the shared-memory transport the moment it did, for the
  // backend (whose works do not say) the moment DDP's wait on it returned.
  std::chrono::steady_clock::time_point completed{};
};

// What one synchronised step cost; the runner exports these as metrics.
struct DdpStepStats {
  std::int64_t step = 0;
  std::int64_t bytes_reduced = 0;  // gradient bytes all-reduced this step (per rank)
  int buckets = 0;
  double allreduce_wait_s = 0.0;  // time blocked waiting for all-reduces at the end
  double finalize_s = 0.0;        // whole finalize: waits + copying averaged grads back
  std::chrono::steady_clock::time_point backward_start;  // first gradient hook
  std::chrono::steady_clock::time_point backward_end;    // last gradient hook (compute done)
  std::chrono::steady_clock::time_point finalized;       // averaged gradients in place
  std::vector<BucketEvent> timeline;
};

class DistributedDataParallel {
 public:
  // Collective: every rank must construct with the same model architecture. Verifies the
  // parameter count and shapes across ranks (std::runtime_error naming the first mismatching
  // parameter and the ranks), then broadcasts parameters and buffers from
  // options.broadcast_from_rank. DDP holds the module (shared ownership).
  DistributedDataParallel(std::shared_ptr<torch::nn::Module> module, ProcessGroup& pg,
                          DdpOptions options = {});
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  torch::nn::Module& module() { return *module_; }
  const DdpOptions& options() const { return options_; }

  // Before forward. Throws std::logic_error if the previous synchronised backward was not
  // finalized; broadcasts buffers when options.broadcast_buffers — a collective whenever the
  // module has buffers, so every rank must call it (skip it for rank-local evaluation).
  void prepare_forward();
  // After forward, before backward: `outputs` are what backward starts from (the loss).
  // Arms the gradient hooks for this step; with find_unused_parameters, walks the autograd
  // graph from `outputs` to find parameters it does not reach. Optional when
  // find_unused_parameters is false (the first gradient hook arms the step then).
  void prepare_backward(const std::vector<at::Tensor>& outputs);
  // Waits for outstanding all-reduces and writes averaged gradients into param.grad().
  // Runs automatically at the end of loss.backward(); calling it again is a no-op. Throws
  // std::runtime_error naming parameters that got no gradient on some rank (without
  // find_unused_parameters). Returns this step's stats.
  const DdpStepStats& finalize_backward();

  // RAII: while alive, backward passes do not synchronise (gradients accumulate locally).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel& ddp);
    ~NoSyncGuard();
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  // Stats of the last finalized synchronised step.
  const DdpStepStats& last_step_stats() const;
  // Optional observer called (on the autograd thread) each time a bucket is launched.
  void set_bucket_launch_observer(std::function<void(const BucketEvent&)> observer);

  // The bucket layout: parameter indices (into module().parameters()) per bucket, in
  // launch order.
  std::vector<std::vector<std::size_t>> bucket_assignment() const;

 private:
  struct State;
  std::shared_ptr<torch::nn::Module> module_;
  DdpOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace ddp3d::dist
