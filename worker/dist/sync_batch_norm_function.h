// Training-mode batch normalisation over the union of every rank's batch (the maths of
// torch.nn.SyncBatchNorm), as a custom autograd function. The collective is injected, so the
// function itself is pure tensor code: `all_reduce_sum` is the identity for one process, a
// c10d all-reduce across ranks (worker/dist/sync_batch_norm.h), or anything a test supplies.
//
// Forward: each rank computes per-channel sum, sum of squares and element count of its input
// (from its local mean and variance, combined in float64 so that E[x²] - E[x]² keeps its
// precision) and all-reduces them as one flat tensor [2C + 1]; it normalises with the global
// mean and biased variance and updates the running statistics with the unbiased variance.
// Backward: sum(dy) and sum(dy * xhat) per channel are all-reduced as one flat tensor [2C],
// giving the exact gradient of the global batch norm with respect to this rank's input. The
// weight and bias gradients are this rank's own sums: DDP (or the caller) reduces them like
// every other parameter gradient.
//
// Every rank must call it, forward and backward, the same number of times in the same order
// (a rank with no samples passes an empty batch and contributes count 0).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

namespace ddp3d::dist {

// Sums `tensor` in place over every rank of a group; every rank passes the same shape and
// dtype. Blocks until the result is there.
using AllReduceSum = std::function<void(at::Tensor& tensor)>;

// input [N, C, *]; weight, bias [C] or undefined (no affine); running_mean, running_var [C] or
// undefined (not tracked), updated in place with `exponential_average_factor`
// (new = (1 - f) * old + f * batch). Throws c10::Error when the global batch has at most one
// value per channel (the unbiased variance is undefined), on every rank alike.
at::Tensor sync_batch_norm(const at::Tensor& input, const at::Tensor& weight,
                           const at::Tensor& bias, const at::Tensor& running_mean,
                           const at::Tensor& running_var, double exponential_average_factor,
                           double eps, AllReduceSum all_reduce_sum);

}  // namespace ddp3d::dist
