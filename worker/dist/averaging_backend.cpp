#include "worker/dist/averaging_backend.h"

#include <ATen/ATen.h>

#include <memory>
#include <stdexcept>

#include "worker/dist/shm_allreduce.h"

namespace ddp3d::dist {
namespace {

using Clock = std::chrono::steady_clock;

// Through shared memory: the transport averages as it sums.
class SharedMemoryWork : public ReduceWork {
 public:
  explicit SharedMemoryWork(std::shared_ptr<ShmAllReduceWork> work) : work_(std::move(work)) {}
  bool wait(std::chrono::milliseconds /*timeout*/) override {
    work_->wait();
    done_ = true;
    return true;
  }
  bool isCompleted() override { return done_; }
  Clock::time_point finished_at() const override { return work_->finished_at(); }

 private:
  std::shared_ptr<ShmAllReduceWork> work_;
  bool done_ = false;
};

// Through the inner backend, which sums: an average is divided once the sum is in.
class InnerWork : public ReduceWork {
 public:
  InnerWork(c10::intrusive_ptr<c10d::Work> work, at::Tensor average, int size)
      : work_(std::move(work)), average_(std::move(average)), size_(size) {}
  bool wait(std::chrono::milliseconds timeout) override {
    if (done_) return true;
    const bool ok = work_->wait(timeout);
    if (average_.defined()) average_.div_(size_);
    finished_ = Clock::now();
    done_ = true;
    return ok;
  }
  bool isCompleted() override { return done_; }
  Clock::time_point finished_at() const override { return finished_; }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  at::Tensor average_;  // undefined for a sum
  int size_;
  bool done_ = false;
  Clock::time_point finished_{};
};

}  // namespace

AveragingBackend::AveragingBackend(c10d::Backend& inner, SharedMemoryAllReduce* shm, int rank,
                                   int size)
    : c10d::Backend(rank, size), inner_(inner), shm_(shm) {}

bool AveragingBackend::in_shared_memory(const at::Tensor& tensor) const {
  return shm_ != nullptr && SharedMemoryAllReduce::supports(tensor);
}

c10::intrusive_ptr<ReduceWork> AveragingBackend::reduce(const at::Tensor& tensor,
                                                        c10d::ReduceOp::RedOpType op) {
  if (op != c10d::ReduceOp::SUM && op != c10d::ReduceOp::AVG) {
    throw std::invalid_argument("AveragingBackend: only SUM and AVG all-reduces");
  }
  const bool average = op == c10d::ReduceOp::AVG;
  if (in_shared_memory(tensor)) {
    return c10::make_intrusive<SharedMemoryWork>(
        shm_->allreduce(tensor, average ? tensor.numel() : 0));
  }
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions sum;
  sum.reduceOp = c10d::ReduceOp::SUM;
  return c10::make_intrusive<InnerWork>(inner_.allreduce(tensors, sum),
                                        average ? tensor : at::Tensor(), getSize());
}

c10::intrusive_ptr<c10d::Work> AveragingBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  if (tensors.size() != 1) {
    throw std::invalid_argument("AveragingBackend: one tensor per all-reduce");
  }
  return reduce(tensors.front(), opts.reduceOp.op_);
}

std::vector<at::Tensor> AveragingBackend::allocate_shared(
    const std::vector<std::pair<std::int64_t, at::ScalarType>>& specs, std::string* why) {
  if (shm_ == nullptr) {
    if (why != nullptr) *why = "no shared-memory all-reduce";
    return {};
  }
  return shm_->allocate_shared(specs, why);
}

}  // namespace ddp3d::dist
