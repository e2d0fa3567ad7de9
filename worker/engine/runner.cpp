#include "worker/engine/runner.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>
#include <torch/utils.h>

#include <chrono>
#include <stdexcept>

#include "worker/dist/ddp.h"
#include "worker/dist/distributed_sampler.h"
#include "worker/dist/process_group.h"
#include "worker/engine/batch_loader.h"
#include "worker/engine/checkpoint.h"
#include "worker/engine/checkpoint_file.h"
#include "worker/engine/collectives.h"
#include "worker/engine/grad_accumulation.h"
#include "worker/engine/loss_scaler.h"
#include "worker/engine/param_schedule.h"

namespace ddp3d::engine {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64 step: decorrelates nearby (seed, rank, epoch, index) tuples.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

// Autocast for one forward pass (mmengine's AmpOptimWrapper.optim_context).
class AutocastScope {
 public:
  AutocastScope(Precision precision, at::DeviceType device) : device_(device) {
    if (precision == Precision::kFp32) return;
    active_ = true;
    prev_enabled_ = at::autocast::is_autocast_enabled(device_);
    prev_dtype_ = at::autocast::get_autocast_dtype(device_);
    at::autocast::set_autocast_enabled(device_, true);
    at::autocast::set_autocast_dtype(device_,
                                     precision == Precision::kBf16 ? at::kBFloat16 : at::kHalf);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!active_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_, prev_enabled_);
    at::autocast::set_autocast_dtype(device_, prev_dtype_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  at::DeviceType device_;
  bool active_ = false;
  bool prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kFloat;
};

void set_group_values(torch::optim::Optimizer& optimizer, const std::string& type, double lr,
                      std::optional<double> momentum) {
  for (auto& group : optimizer.param_groups()) {
    group.options().set_lr(lr);
    if (!momentum) continue;
    if (type == "SGD") {
      static_cast<torch::optim::SGDOptions&>(group.options()).momentum(*momentum);
    } else if (type == "AdamW") {
      auto& o = static_cast<torch::optim::AdamWOptions&>(group.options());
      o.betas({*momentum, std::get<1>(o.betas())});
    } else if (type == "Adam") {
      auto& o = static_cast<torch::optim::AdamOptions&>(group.options());
      o.betas({*momentum, std::get<1>(o.betas())});
    }
  }
}

double base_momentum(const OptimizerSpec& s) {
  return s.type == "SGD" ? s.momentum : s.beta1;
}

// Every record of every rank, in dataset order (the sampler deals index i to rank i % world),
// without the sampler's padding.
std::vector<Sample> gather_results(const std::vector<Sample>& mine, std::int64_t dataset_size,
                                   const RunContext& ctx) {
  c10::impl::GenericList list(c10::AnyType::get());
  for (const Sample& s : mine) {
    c10::Dict<std::string, at::Tensor> tensors;
    for (const auto& [k, v] : s.tensors) tensors.insert(k, v.to(at::kCPU));
    c10::Dict<std::string, std::string> meta;
    for (const auto& [k, v] : s.meta) meta.insert(k, v);
    list.push_back(c10::ivalue::Tuple::create({c10::IValue(tensors), c10::IValue(meta)}));
  }
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(list));
  const std::vector<std::string> parts =
      allgather_bytes(ctx.pg, std::string(bytes.begin(), bytes.end()));
  if (ctx.rank != 0) return {};
  std::vector<std::vector<Sample>> per_rank;
  for (const std::string& part : parts) {
    const c10::IValue iv = torch::pickle_load(std::vector<char>(part.begin(), part.end()));
    std::vector<Sample> samples;
    for (const c10::IValue& item : iv.toListRef()) {
      const auto& elems = item.toTupleRef().elements();
      Sample s;
      for (const auto& e : elems[0].toGenericDict())
        s.tensors[e.key().toStringRef()] = e.value().toTensor();
      for (const auto& e : elems[1].toGenericDict())
        s.meta[e.key().toStringRef()] = e.value().toStringRef();
      samples.push_back(std::move(s));
    }
    per_rank.push_back(std::move(samples));
  }
  std::vector<Sample> ordered;
  for (std::size_t i = 0; static_cast<std::int64_t>(ordered.size()) < dataset_size; ++i) {
    bool any = false;
    for (auto& samples : per_rank) {
      if (i < samples.size() && static_cast<std::int64_t>(ordered.size()) < dataset_size) {
        ordered.push_back(std::move(samples[i]));
        any = true;
      }
    }
    if (!any) break;
  }
  return ordered;
}

}  // namespace

std::vector<std::int64_t> epoch_indices(std::int64_t dataset_size, const RunContext& ctx,
                                        bool shuffle, std::uint64_t seed, std::int64_t epoch,
                                        bool drop_last) {
  dist::DistributedSampler sampler(dataset_size,
                                   {ctx.world_size, ctx.rank, shuffle, seed, drop_last});
  sampler.set_epoch(epoch);
  return sampler.indices();
}

std::uint64_t data_seed(std::uint64_t seed, int rank, std::int64_t epoch, std::int64_t index) {
  return mix(
      mix(mix(mix(0, seed), static_cast<std::uint64_t>(rank)), static_cast<std::uint64_t>(epoch)),
      static_cast<std::uint64_t>(index));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& s, Model& model) {
  std::vector<at::Tensor> params = model.parameters();
  if (s.type == "AdamW") {
    return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(s.lr)
                                                             .betas({s.beta1, s.beta2})
                                                             .eps(s.eps)
                                                             .weight_decay(s.weight_decay)
                                                             .amsgrad(s.amsgrad));
  }
  if (s.type == "Adam") {
    return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(s.lr)
                                                            .betas({s.beta1, s.beta2})
                                                            .eps(s.eps)
                                                            .weight_decay(s.weight_decay)
                                                            .amsgrad(s.amsgrad));
  }
  if (s.type == "SGD") {
    return std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(s.lr)
                                                           .momentum(s.momentum)
                                                           .dampening(s.dampening)
                                                           .weight_decay(s.weight_decay)
                                                           .nesterov(s.nesterov));
  }
  throw std::invalid_argument("optim_wrapper.optimizer.type: unsupported optimizer '" + s.type +
                              "' (AdamW, Adam, SGD)");
}

MetricMap evaluate(Model& model, const Dataset& dataset, const LoaderSpec& spec,
                   Evaluator& evaluator, const RunContext& ctx) {
  torch::NoGradGuard no_grad;
  model.eval();
  evaluator.reset();
  BatchLoaderOptions lo{spec.batch_size, spec.num_workers, 0, false};
  std::shared_ptr<const Dataset> data(&dataset, [](const Dataset*) {});
  BatchLoader loader(data, epoch_indices(dataset.size(), ctx, false, 0, 0, false), lo,
                     [&](std::int64_t index) { return data_seed(ctx.seed, ctx.rank, 0, index); });
  while (auto batch = loader.next()) {
    const Batch on_device = batch->to(ctx.device);
    evaluator.process(on_device, model.predict(on_device));
  }
  std::vector<Sample> all = gather_results(evaluator.results(), dataset.size(), ctx);
  evaluator.reset();
  model.train();
  if (ctx.rank != 0) return {};
  return evaluator.compute_metrics(all);
}

Runner::Runner(RunnerOptions options, RunContext ctx, std::shared_ptr<Model> model,
               std::shared_ptr<const Dataset> train_data, std::shared_ptr<const Dataset> val_data,
               std::shared_ptr<Evaluator> val_evaluator, TrainLog& log)
    : options_(std::move(options)),
      ctx_(ctx),
      model_(std::move(model)),
      train_data_(std::move(train_data)),
      val_data_(std::move(val_data)),
      val_evaluator_(std::move(val_evaluator)),
      log_(log) {
  if (options_.precision == Precision::kFp16 && ctx_.device.is_cpu()) {
    throw std::invalid_argument(
        "optim_wrapper: AmpOptimWrapper with dtype float16 needs CUDA; use bfloat16 on CPU or "
        "OptimWrapper");
  }
  model_->to(ctx_.device);
  optimizer_ = make_optimizer(options_.optimizer, *model_);
  const auto per_rank = static_cast<std::int64_t>(
      epoch_indices(train_data_->size(), ctx_, false, 0, 0, options_.train_loader.drop_last)
          .size());
  const std::int64_t bs = options_.train_loader.batch_size;
  iters_per_epoch_ = options_.train_loader.drop_last ? per_rank / bs : (per_rank + bs - 1) / bs;
  if (iters_per_epoch_ < 1) {
    throw std::invalid_argument("train_dataloader: no full batch per rank (dataset " +
                                std::to_string(train_data_->size()) + " samples, world size " +
                                std::to_string(ctx_.world_size) + ", batch_size " +
                                std::to_string(bs) + ")");
  }
  schedule_ = std::make_unique<ParamSchedule>(options_.schedule, iters_per_epoch_);
  accumulation_ = std::make_unique<GradAccumulation>(options_.accumulative_counts,
                                                     options_.max_epochs * iters_per_epoch_);
  scaler_ = std::make_unique<DynamicLossScaler>(options_.loss_scaler);
}

Runner::~Runner() = default;

void Runner::resume() {
  if (options_.resume.empty()) return;
  std::filesystem::path path;
  if (options_.resume == "auto") {
    std::vector<std::string> warnings;
    path = find_resume_checkpoint(options_.work_dir, &warnings);
    for (const std::string& w : warnings) log_.warning(w);
    if (path.empty()) {
      log_.info("resume auto: no valid checkpoint in " + options_.work_dir.string() +
                ", starting from scratch");
      return;
    }
  } else {
    path = options_.resume;
  }
  TrainingState state;
  // Throws CorruptCheckpoint naming the file for an explicit path.
  deserialize_checkpoint(read_checkpoint_file(path), path.string(), *model_, optimizer_.get(),
                         &state);
  if (static_cast<std::uint64_t>(state.seed) != ctx_.seed) {
    log_.warning("the checkpoint was trained with seed " + std::to_string(state.seed) +
                 "; continuing with it (not " + std::to_string(ctx_.seed) + ")");
    ctx_.seed = static_cast<std::uint64_t>(state.seed);
  }
  if (state.loss_scale > 0) scaler_->load_state(state.loss_scale, state.scale_growth_tracker);
  start_epoch_ = state.epoch;
  global_iter_ = state.iter;
  if (state.world_size != ctx_.world_size) {
    log_.warning("the checkpoint was written at world size " + std::to_string(state.world_size) +
                 ", resuming at " + std::to_string(ctx_.world_size) +
                 ": the data order differs from the original run");
  }
  log_.info("resumed from " + path.string() + " at epoch " + std::to_string(state.epoch) +
            ", iteration " + std::to_string(state.iter));
}

void Runner::train() {
  resume();
  // DDP after the checkpoint is loaded: loading replaces the parameters' storage (Tensor::set_),
  // and DDP's gradient hooks must be attached to the parameters as they will be trained.
  if (ctx_.pg != nullptr) {
    // Checks shapes across ranks and starts every rank from rank 0's weights.
    dist::DdpOptions ddp;
    ddp.bucket_cap_mb = options_.bucket_cap_mb;
    ddp.first_bucket_cap_mb = options_.first_bucket_cap_mb;
    ddp.find_unused_parameters = options_.find_unused_parameters;
    ddp.broadcast_buffers = options_.broadcast_buffers;
    ddp_ = std::make_unique<dist::DistributedDataParallel>(model_, *ctx_.pg, ddp);
  }
  model_->train();
  for (std::int64_t epoch = start_epoch_; epoch < options_.max_epochs; ++epoch) {
    train_epoch(epoch);
    const std::int64_t done = epoch + 1;
    const bool last = done == options_.max_epochs;
    const std::int64_t every = options_.checkpoint_interval;
    if ((every > 0 && done % every == 0) || last) save_checkpoint(done);
    if (val_data_ && val_evaluator_ && options_.val_loader && done >= options_.val_begin &&
        (done % options_.val_interval == 0 || last)) {
      // Every rank evaluates rank 0's buffers (BatchNorm statistics), the ones the checkpoint
      // holds, as PyTorch's DDP forward does in eval mode: otherwise each rank's shard is
      // scored with its own statistics and `ddp3d test` on the checkpoint gives other numbers.
      if (ddp_) ddp_->prepare_forward();
      const MetricMap metrics =
          evaluate(*model_, *val_data_, *options_.val_loader, *val_evaluator_, ctx_);
      const std::int64_t val_iters =
          (static_cast<std::int64_t>(
               epoch_indices(val_data_->size(), ctx_, false, 0, 0, false).size()) +
           options_.val_loader->batch_size - 1) /
          options_.val_loader->batch_size;
      log_.metrics("val", done, val_iters, global_iter_, metrics);
    }
  }
}

void Runner::train_epoch(std::int64_t epoch) {
  // Epoch-derived global RNG: dropout & co. repeat exactly after a resume at this epoch.
  torch::manual_seed(data_seed(ctx_.seed, ctx_.rank, epoch, -1));
  const std::uint64_t sampler_seed = static_cast<std::uint64_t>(
      options_.train_loader.seed.value_or(static_cast<std::int64_t>(ctx_.seed)));
  BatchLoaderOptions lo{options_.train_loader.batch_size, options_.train_loader.num_workers, 0,
                        options_.train_loader.drop_last};
  BatchLoader loader(
      train_data_,
      epoch_indices(train_data_->size(), ctx_, options_.train_loader.shuffle, sampler_seed, epoch,
                    options_.train_loader.drop_last),
      lo, [&](std::int64_t index) { return data_seed(ctx_.seed, ctx_.rank, epoch, index); });
  const OptimizerSpec& os = options_.optimizer;
  const bool momentum_scheduled = schedule_->schedules(ScheduledParam::kMomentum);
  const std::int64_t total_iters = options_.max_epochs * iters_per_epoch_;

  std::vector<std::string> loss_names;
  std::vector<at::Tensor> window_sums;
  double window_time = 0;
  double window_data_time = 0;
  std::int64_t window_n = 0;
  double lr = os.lr;
  double momentum = base_momentum(os);

  for (std::int64_t i = 0; i < iters_per_epoch_; ++i) {
    const Clock::time_point t0 = Clock::now();
    std::optional<Batch> host_batch = loader.next();
    if (!host_batch) throw std::logic_error("loader ended early");
    const Batch batch = host_batch->to(ctx_.device);
    const double data_time = seconds_since(t0);

    lr = schedule_->value(ScheduledParam::kLr, os.lr, global_iter_);
    std::optional<double> m;
    if (momentum_scheduled)
      m = schedule_->value(ScheduledParam::kMomentum, base_momentum(os), global_iter_);
    momentum = m.value_or(base_momentum(os));
    set_group_values(*optimizer_, os.type, lr, m);

    const bool update = accumulation_->is_update_iter(global_iter_);
    std::optional<double> allreduce_wait;
    if (ddp_) ddp_->prepare_forward();
    LossMap losses;
    {
      AutocastScope autocast(options_.precision, ctx_.device.type());
      losses = model_->forward_train(batch);
    }
    at::Tensor loss = total_loss(losses) / accumulation_->loss_divisor(global_iter_);
    if (options_.precision == Precision::kFp16) loss = loss * scaler_->scale();
    if (ddp_ && !update) {
      // Accumulation: gradients stay local until the group's last iteration.
      auto no_sync = ddp_->no_sync();
      ddp_->prepare_backward({loss});
      loss.backward();
    } else if (ddp_) {
      ddp_->prepare_backward({loss});
      loss.backward();
      // Averaged gradients in place (no-op if backward did it); the stats say how long the
      // step blocked on all-reduces that backward could not hide.
      allreduce_wait = ddp_->finalize_backward().allreduce_wait_s;
    } else {
      loss.backward();
    }

    if (update) {
      bool apply = true;
      if (options_.precision == Precision::kFp16) {
        std::vector<at::Tensor> grads;
        for (const at::Tensor& p : model_->parameters()) grads.push_back(p.grad());
        // Gradients are already averaged, so every rank reaches the same verdict.
        apply = scaler_->update(scaler_->unscale_and_check(grads));
        if (!apply)
          log_.warning("fp16: inf/NaN gradients, step skipped, loss scale now " +
                       std::to_string(scaler_->scale()));
      }
      if (apply && options_.clip_max_norm) {
        torch::nn::utils::clip_grad_norm_(model_->parameters(), *options_.clip_max_norm,
                                          options_.clip_norm_type);
      }
      if (apply) optimizer_->step();
      optimizer_->zero_grad();
    }
    ++global_iter_;

    // Window statistics (summed as tensors: no host sync per iteration on CUDA).
    if (loss_names.empty()) {
      loss_names.push_back("loss");
      for (const auto& entry : losses) {
        if (entry.first != "loss") loss_names.push_back(entry.first);
      }
      // One tensor each: assign(n, t) would copy one handle n times, sharing its storage.
      for (std::size_t k = 0; k < loss_names.size(); ++k)
        window_sums.push_back(at::zeros({}, at::kDouble));
    }
    const at::Tensor total = total_loss(losses).detach();
    for (std::size_t k = 0; k < loss_names.size(); ++k) {
      const at::Tensor v = k == 0 ? total : losses.at(loss_names[k]).detach();
      window_sums[k] += v.to(at::kCPU, at::kDouble);
    }
    const double step_time = seconds_since(t0);
    window_time += step_time;
    window_data_time += data_time;
    ++window_n;
    if (telemetry_ != nullptr)
      telemetry_->on_step({epoch + 1, batch.size, step_time, lr, allreduce_wait});

    const bool log_now = (i + 1) % options_.log_interval == 0 || i + 1 == iters_per_epoch_;
    if (log_now) {
      std::vector<double> values;
      for (const at::Tensor& s : window_sums) values.push_back(s.item<double>() / window_n);
      if (telemetry_ != nullptr) telemetry_->on_loss(values[0]);  // this rank's, not the mean
      values.push_back(window_time / window_n);
      values.push_back(window_data_time / window_n);
      values = allreduce_mean(ctx_.pg, values);  // every rank logs the same numbers
      IterRecord r;
      r.epoch = epoch + 1;
      r.iter_in_epoch = i + 1;
      r.iters_per_epoch = iters_per_epoch_;
      r.global_iter = global_iter_;
      r.lr = lr;
      r.momentum = momentum;
      r.time = values[loss_names.size()];
      r.data_time = values[loss_names.size() + 1];
      r.eta_seconds = r.time * static_cast<double>(total_iters - global_iter_);
      for (std::size_t k = 0; k < loss_names.size(); ++k)
        r.losses.emplace_back(loss_names[k], values[k]);
      log_.iteration(r);
      for (at::Tensor& s : window_sums) s.zero_();
      window_time = window_data_time = 0;
      window_n = 0;
    }
  }
}

void Runner::save_checkpoint(std::int64_t epochs_done) {
  if (ctx_.rank != 0) return;
  TrainingState state;
  state.epoch = epochs_done;
  state.iter = global_iter_;
  state.loss_scale = options_.precision == Precision::kFp16 ? scaler_->scale() : 0.0;
  state.scale_growth_tracker = scaler_->growth_tracker();
  state.seed = static_cast<std::int64_t>(ctx_.seed);
  state.world_size = ctx_.world_size;
  state.torch_rng_state = at::detail::getDefaultCPUGenerator().get_state();
  const std::filesystem::path path =
      options_.work_dir / ("epoch_" + std::to_string(epochs_done) + ".pth");
  write_checkpoint_file(path, serialize_checkpoint(*model_, *optimizer_, state));
  write_last_checkpoint(options_.work_dir, path);
  for (const auto& removed : remove_old_checkpoints(options_.work_dir, options_.max_keep_ckpts)) {
    log_.info("removed old checkpoint " + removed.string());
  }
  log_.info("saved checkpoint " + path.string());
}

}  // namespace ddp3d::engine
