#include "worker/dist/sync_batch_norm_function.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>
#include <utility>
#include <vector>

namespace ddp3d::dist {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Every dimension but the channel one (1).
std::vector<int64_t> reduce_dims(int64_t dim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < dim; ++d) dims.push_back(d);
  return dims;
}

// [C] → [1, C, 1, ...] to broadcast against an input of `dim` dimensions.
at::Tensor per_channel(const at::Tensor& t, int64_t dim) {
  std::vector<int64_t> shape(static_cast<size_t>(dim), 1);
  shape[1] = -1;
  return t.view(shape);
}

// Half and bfloat16 inputs are normalised in float, as BatchNorm's kernels do.
at::ScalarType compute_type(at::ScalarType t) {
  return t == at::kHalf || t == at::kBFloat16 ? at::kFloat : t;
}

// Carries the collective from forward to backward: saved_data holds IValues only, and a
// capsule is the IValue for an opaque C++ object.
struct AllReduceHolder : torch::CustomClassHolder {
  explicit AllReduceHolder(AllReduceSum f) : fn(std::move(f)) {}
  AllReduceSum fn;
};

class SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
 public:
  // Optional tensors: Function::apply takes an absent one as "no input" (an undefined
  // at::Tensor would be taken as a variable and fail).
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input,
                            const std::optional<at::Tensor>& weight_opt,
                            const std::optional<at::Tensor>& bias_opt,
                            const std::optional<at::Tensor>& running_mean_opt,
                            const std::optional<at::Tensor>& running_var_opt, double factor,
                            double eps, const c10::intrusive_ptr<AllReduceHolder>& all_reduce) {
    const at::Tensor weight = weight_opt.value_or(at::Tensor());
    const at::Tensor bias = bias_opt.value_or(at::Tensor());
    const at::Tensor running_mean = running_mean_opt.value_or(at::Tensor());
    const at::Tensor running_var = running_var_opt.value_or(at::Tensor());
    const int64_t dim = input.dim();
    const int64_t c = input.size(1);
    const int64_t n = c == 0 ? 0 : input.numel() / c;
    const at::Tensor x = input.to(compute_type(input.scalar_type()));

    // [sum x (C), sum x² (C), count]. From the local mean and biased variance, in float64:
    // sum x² = n (var + mean²) keeps the precision that float sums of x² would lose when the
    // mean is large against the spread.
    at::Tensor stats = at::zeros({2 * c + 1}, x.options().dtype(at::kDouble));
    if (n > 0) {
      auto [var, mean] = at::var_mean(x, reduce_dims(dim), /*correction=*/0, /*keepdim=*/false);
      const at::Tensor m = mean.to(at::kDouble);
      stats.narrow(0, 0, c).copy_(m * static_cast<double>(n));
      stats.narrow(0, c, c).copy_((var.to(at::kDouble) + m * m) * static_cast<double>(n));
    }
    stats.narrow(0, 2 * c, 1).fill_(static_cast<double>(n));
    all_reduce->fn(stats);

    const double count = stats[2 * c].item<double>();
    TORCH_CHECK(count > 1,
                "SyncBatchNorm: expected more than 1 value per channel when training, got a "
                "global batch of ",
                count, " (this rank's input: ", input.sizes(), ")");
    const at::Tensor mean = stats.narrow(0, 0, c) / count;
    const at::Tensor var = (stats.narrow(0, c, c) / count - mean * mean).clamp_min(0);
    if (running_mean.defined()) {
      running_mean.mul_(1 - factor).add_(mean.to(running_mean.scalar_type()), factor);
    }
    if (running_var.defined()) {
      const at::Tensor unbiased = var * (count / (count - 1));
      running_var.mul_(1 - factor).add_(unbiased.to(running_var.scalar_type()), factor);
    }

    const at::Tensor mean_c = mean.to(x.scalar_type());
    const at::Tensor invstd = (var + eps).rsqrt().to(x.scalar_type());
    at::Tensor y = (x - per_channel(mean_c, dim)) * per_channel(invstd, dim);
    if (weight.defined()) y = y * per_channel(weight, dim);
    if (bias.defined()) y = y + per_channel(bias, dim);

    ctx->save_for_backward({input, weight, mean_c, invstd});
    ctx->saved_data["count"] = count;
    ctx->saved_data["all_reduce"] = at::IValue::make_capsule(all_reduce);
    return y.to(input.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& mean = saved[2];
    const at::Tensor& invstd = saved[3];
    const double count = ctx->saved_data["count"].toDouble();
    const auto all_reduce = c10::static_intrusive_pointer_cast<AllReduceHolder>(
        ctx->saved_data["all_reduce"].toCapsule());

    const int64_t dim = input.dim();
    const int64_t c = input.size(1);
    const auto dims = reduce_dims(dim);
    const at::Tensor x = input.to(mean.scalar_type());
    const at::Tensor dy = grad_outputs[0].to(mean.scalar_type());
    const at::Tensor xhat = (x - per_channel(mean, dim)) * per_channel(invstd, dim);
    // This rank's sums; an empty batch contributes zeros.
    const at::Tensor sum_dy = dy.sum(dims);
    const at::Tensor sum_dy_xhat = (dy * xhat).sum(dims);

    at::Tensor grad_input;
    if (ctx->needs_input_grad(0)) {
      // d/dx of the global batch norm: every rank's dy reaches this rank's x through the
      // shared mean and variance, hence the global sums.
      at::Tensor sums = at::cat({sum_dy, sum_dy_xhat});
      all_reduce->fn(sums);
      const at::Tensor mean_dy = sums.narrow(0, 0, c) / count;
      const at::Tensor mean_dy_xhat = sums.narrow(0, c, c) / count;
      at::Tensor scale = invstd;
      if (weight.defined()) scale = scale * weight.to(invstd.scalar_type());
      grad_input = (dy - per_channel(mean_dy, dim) - xhat * per_channel(mean_dy_xhat, dim)) *
                   per_channel(scale, dim);
      grad_input = grad_input.to(input.scalar_type());
    }
    // Autograd casts these to the parameters' dtype.
    at::Tensor grad_weight;
    if (weight.defined() && ctx->needs_input_grad(1)) grad_weight = sum_dy_xhat;
    at::Tensor grad_bias;
    if (ctx->needs_input_grad(2)) grad_bias = sum_dy;
    // One entry per forward argument: running stats, factor, eps and the collective get none.
    return {grad_input,   grad_weight,  grad_bias,    at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor sync_batch_norm(const at::Tensor& input, const at::Tensor& weight,
                           const at::Tensor& bias, const at::Tensor& running_mean,
                           const at::Tensor& running_var, double exponential_average_factor,
                           double eps, AllReduceSum all_reduce_sum) {
  TORCH_CHECK(input.dim() >= 2,
              "SyncBatchNorm: expected an input of at least 2 dimensions [N, C, ...], got ",
              input.sizes());
  TORCH_CHECK(static_cast<bool>(all_reduce_sum), "SyncBatchNorm: no all-reduce given");
  auto holder = c10::make_intrusive<AllReduceHolder>(std::move(all_reduce_sum));
  auto opt = [](const at::Tensor& t) {
    return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
  };
  return SyncBatchNormFunction::apply(input, opt(weight), opt(bias), opt(running_mean),
                                      opt(running_var), exponential_average_factor, eps, holder);
}

}  // namespace ddp3d::dist
