#include "worker/dist/sync_batch_norm_function.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace ddp3d::dist {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

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
    const int64_t c = input.size(1);
    const int64_t n = c == 0 ? 0 : input.numel() / c;
    const at::ScalarType acc = compute_type(input.scalar_type());

    // [sum x (C), sum x² (C), count], in float64, from this rank's mean and biased variance
    // (sum x² = n (var + mean²) keeps the precision that float sums of x² would lose when the
    // mean is large against the spread). BatchNorm's training kernel gives them fastest (its
    // output is not used); with eps 0 its invstd is var^-1/2, and 0 for a constant channel.
    at::Tensor stats = at::zeros({2 * c + 1}, input.options().dtype(at::kDouble));
    if (n > 0) {
      const auto local = at::native_batch_norm(input, {}, {}, {}, {}, /*training=*/true, 0.0,
                                               /*eps=*/0.0);
      const at::Tensor m = std::get<1>(local).to(at::kDouble);
      const at::Tensor invstd = std::get<2>(local).to(at::kDouble);
      const at::Tensor v = at::where(invstd > 0, invstd.pow(-2), at::zeros_like(invstd));
      stats.narrow(0, 0, c).copy_(m * static_cast<double>(n));
      stats.narrow(0, c, c).copy_((v + m * m) * static_cast<double>(n));
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

    const at::Tensor mean_c = mean.to(acc);
    const at::Tensor var_c = var.to(acc);
    const at::Tensor w = weight.defined() ? weight.to(acc) : at::ones({c}, mean_c.options());
    const at::Tensor b = bias.defined() ? bias.to(acc) : at::zeros({c}, mean_c.options());
    // Normalising with given statistics is BatchNorm's inference kernel (one fused pass).
    at::Tensor y = n == 0 ? at::empty_like(input)
                          : std::get<0>(at::native_batch_norm(input, w, b, mean_c, var_c,
                                                              /*training=*/false, 0.0, eps));

    ctx->save_for_backward({input, w, mean_c, var_c});
    ctx->saved_data["count"] = count;
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["has_weight"] = weight.defined();
    ctx->saved_data["has_bias"] = bias.defined();
    ctx->saved_data["all_reduce"] = at::IValue::make_capsule(all_reduce);
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& input = saved[0];
    const at::Tensor& w = saved[1];
    const at::Tensor& mean = saved[2];
    const at::Tensor& var = saved[3];
    const double count = ctx->saved_data["count"].toDouble();
    const double eps = ctx->saved_data["eps"].toDouble();
    const auto all_reduce = c10::static_intrusive_pointer_cast<AllReduceHolder>(
        ctx->saved_data["all_reduce"].toCapsule());
    const int64_t c = input.size(1);
    const at::Tensor& dy = grad_outputs[0];

    // BatchNorm's inference backward, in one fused kernel: dy·w·invstd, and this rank's
    // Σ dy·x̂ and Σ dy per channel. An empty batch contributes zeros.
    at::Tensor dx_local = at::empty_like(input);
    at::Tensor sum_dy_xhat = at::zeros({c}, mean.options());
    at::Tensor sum_dy = at::zeros({c}, mean.options());
    if (input.numel() > 0) {
      std::tie(dx_local, sum_dy_xhat, sum_dy) = at::native_batch_norm_backward(
          dy, input, w, mean, var, {}, {}, /*train=*/false, eps, {true, true, true});
    }

    at::Tensor grad_input;
    if (ctx->needs_input_grad(0)) {
      // d/dx of the global batch norm: w·invstd·(dy − mean(dy) − x̂·mean(dy·x̂)), the means
      // over every rank's batch (each rank's dy reaches this x through the shared statistics).
      at::Tensor sums = at::cat({sum_dy, sum_dy_xhat});
      all_reduce->fn(sums);
      grad_input = dx_local;
      if (input.numel() > 0) {
        const at::Tensor scale = w * (var + eps).rsqrt();
        // w·invstd·(x̂·mean(dy·x̂) + mean(dy)) is BatchNorm inference with these weights.
        const at::Tensor correction =
            std::get<0>(at::native_batch_norm(input, scale * sums.narrow(0, c, c) / count,
                                              scale * sums.narrow(0, 0, c) / count, mean, var,
                                              /*training=*/false, 0.0, eps));
        grad_input = dx_local - correction;
      }
    }
    // Autograd casts these to the parameters' dtype. needs_input_grad counts the tensors that
    // were passed (input, then weight and bias when present).
    const bool has_weight = ctx->saved_data["has_weight"].toBool();
    const bool has_bias = ctx->saved_data["has_bias"].toBool();
    at::Tensor grad_weight;
    if (has_weight && ctx->needs_input_grad(1)) grad_weight = sum_dy_xhat;
    at::Tensor grad_bias;
    if (has_bias && ctx->needs_input_grad(has_weight ? 2 : 1)) grad_bias = sum_dy;
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
