// SyncBatchNorm: BatchNorm whose training statistics cover the whole distributed batch
// (torch.nn.SyncBatchNorm; mmdet3d's norm_cfg type 'SyncBN'). A drop-in for
// torch::nn::BatchNorm1d/2d/3d: the same parameters (weight, bias) and buffers (running_mean,
// running_var, num_batches_tracked) under the same names, so checkpoints move freely between
// BN and SyncBN models, and the same eps/momentum semantics (momentum nullopt = cumulative
// average).
//
// In training mode with a group of world size > 1 it normalises with the mean and variance of
// the union of every rank's batch, and its backward gives the exact gradient of that global
// batch norm (worker/dist/sync_batch_norm_function.h). Otherwise (eval mode, or no group, or
// world size 1) it is exactly torch::nn::BatchNorm.
//
// The group: the one passed to the constructor, else the process-wide default
// (worker/dist/default_process_group.h) as it is at each forward. In training, every rank of
// the group must run the module's forward and backward the same number of times in the same
// order relative to the group's other collectives (DDP's buckets included), as with PyTorch's;
// a rank with no samples passes an empty batch [0, C, ...].
#pragma once

#include <torch/nn/modules/batchnorm.h>

namespace ddp3d::dist {

class ProcessGroup;

class SyncBatchNormImpl
    : public torch::nn::NormImplBase<1, SyncBatchNormImpl, torch::nn::BatchNormOptions> {
 public:
  explicit SyncBatchNormImpl(const torch::nn::BatchNormOptions& options,
                             ProcessGroup* group = nullptr);

  // input [N, C, *] (at least 2 dimensions; C = num_features).
  at::Tensor forward(const at::Tensor& input);

  void pretty_print(std::ostream& stream) const override;

  // The group this module synchronises over at the next forward (nullptr: none).
  ProcessGroup* group() const;

 protected:
  void _check_input_dim(const at::Tensor& input) override;

 private:
  ProcessGroup* group_;  // nullptr: the default group
};
TORCH_MODULE(SyncBatchNorm);

}  // namespace ddp3d::dist
