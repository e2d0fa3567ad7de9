#include "worker/dist/sync_batch_norm.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/batchnorm.h>

#include <ostream>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "worker/dist/default_process_group.h"
#include "worker/dist/process_group.h"
#include "worker/dist/sync_batch_norm_function.h"

namespace ddp3d::dist {
namespace {

// An in-place sum over `group`. NCCL reduces tensors where they are (CUDA); Gloo here works on
// CPU tensors, so statistics of a CUDA input go through host memory (2C + 1 numbers).
AllReduceSum all_reduce_over(ProcessGroup* group) {
  return [group](at::Tensor& t) {
    const bool via_host = group->kind() == BackendKind::kGloo && !t.device().is_cpu();
    std::vector<at::Tensor> one{via_host ? t.cpu() : t};
    group->backend().allreduce(one)->wait();
    if (via_host) t.copy_(one[0]);
  };
}

}  // namespace

SyncBatchNormImpl::SyncBatchNormImpl(const torch::nn::BatchNormOptions& options,
                                     ProcessGroup* group)
    : NormImplBase(options), group_(group) {}

ProcessGroup* SyncBatchNormImpl::group() const {
  return group_ != nullptr ? group_ : default_process_group();
}

void SyncBatchNormImpl::_check_input_dim(const at::Tensor& input) {
  TORCH_CHECK(input.dim() >= 2, "SyncBatchNorm: expected an input of at least 2 dimensions ",
              "[N, C, ...], got ", input.sizes());
  TORCH_CHECK(input.size(1) == options.num_features(), "SyncBatchNorm: expected ",
              options.num_features(), " channels (dimension 1), got input ", input.sizes());
}

at::Tensor SyncBatchNormImpl::forward(const at::Tensor& input) {
  _check_input_dim(input);
  // torch::nn::BatchNorm's factor: momentum, or 1/n for the cumulative average.
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    num_batches_tracked += 1;
    if (!options.momentum().has_value()) factor = 1.0 / num_batches_tracked.item<double>();
  }
  ProcessGroup* const pg = group();
  if (!is_training() || pg == nullptr || pg->size() == 1) {
    return torch::nn::functional::detail::batch_norm(
        input, running_mean, running_var, weight, bias,
        is_training() || !options.track_running_stats(), factor, options.eps());
  }
  return sync_batch_norm(input, weight, bias, running_mean, running_var, factor, options.eps(),
                         all_reduce_over(pg));
}

void SyncBatchNormImpl::pretty_print(std::ostream& stream) const {
  stream << std::boolalpha << "ddp3d::dist::SyncBatchNorm(" << options.num_features()
         << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum().has_value()) {
    stream << *options.momentum();
  } else {
    stream << "None";
  }
  stream << ", affine=" << options.affine()
         << ", track_running_stats=" << options.track_running_stats() << ')';
}

}  // namespace ddp3d::dist
