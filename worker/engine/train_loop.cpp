#include "worker/engine/train_loop.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "worker/dist/ddp.h"
#include "worker/engine/batch_loader.h"
#include "worker/engine/checkpoint_file.h"
#include "worker/engine/collectives.h"
#include "worker/engine/data_order.h"
#include "worker/engine/eval_loop_registry.h"
#include "worker/engine/train_loop_registry.h"

namespace ddp3d::engine {
namespace {

// Calls `point` on every hook, in order.
template <typename Hooks, typename... Params, typename... Args>
void call_hooks(const Hooks& hooks, void (Hook::*point)(Params...), Args&... args) {
  for (const auto& registered : hooks) ((*registered.hook).*point)(args...);
}

double host_value(const at::Tensor& t) {
  return t.detach().to(at::kCPU, at::kDouble).item<double>();
}

// mmengine's log_vars: the total first, then every other term in name order.
std::vector<std::pair<std::string, double>> log_vars(const LossMap& losses,
                                                     const at::Tensor& total) {
  std::vector<std::pair<std::string, double>> vars;
  vars.emplace_back("loss", host_value(total));
  for (const auto& [name, value] : losses) {
    if (name != "loss") vars.emplace_back(name, host_value(value));
  }
  return vars;
}

}  // namespace

std::string cpu_rng_state() {
  const at::Tensor t = at::detail::getDefaultCPUGenerator().get_state().contiguous();
  return {reinterpret_cast<const char*>(t.data_ptr<std::uint8_t>()),
          static_cast<std::size_t>(t.numel())};
}

void set_cpu_rng_state(const std::string& bytes) {
  at::Tensor t = at::empty({static_cast<std::int64_t>(bytes.size())}, at::kByte);
  std::memcpy(t.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  at::Generator gen = at::detail::getDefaultCPUGenerator();  // a handle on the global one
  const std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(t);
}

TrainLoop::TrainLoop(const RunnerOptions& options, std::shared_ptr<const LoopPlan> plan,
                     const RunContext& ctx, Model& model, OptimWrapper& optim,
                     dist::DistributedDataParallel* ddp, std::shared_ptr<const Dataset> train_data,
                     std::shared_ptr<const Dataset> val_data, Evaluator* val_evaluator,
                     std::int64_t iters_per_epoch)
    : options_(options),
      ctx_(ctx),
      model_(model),
      optim_(optim),
      ddp_(ddp),
      train_data_(std::move(train_data)),
      val_data_(std::move(val_data)),
      val_evaluator_(val_evaluator),
      plan_(std::move(plan)),
      progress_(planned_progress(*plan_, iters_per_epoch)) {
  if (can_validate()) val_loop_ = eval_loop_registry().build(options_.val_cfg);
}

TrainLoop::~TrainLoop() = default;

void TrainLoop::set_start(std::int64_t epochs_completed, std::int64_t global_iter,
                          const std::vector<std::string>& rng_states) {
  progress_.epoch = epochs_completed;
  progress_.epochs_completed = epochs_completed;
  progress_.global_iter = global_iter;
  const std::int64_t done_in_epoch = global_iter - epochs_completed * progress_.iters_per_epoch;
  // A checkpoint with another global batch has another number of iterations per epoch: its
  // position inside the epoch is clamped (the runner warns that the data order differs). With
  // the same global batch the position is exact at any world size.
  resume_iter_in_epoch_ = std::clamp<std::int64_t>(done_in_epoch, 0, progress_.iters_per_epoch - 1);
  // Per-rank generator states mean something only for the ranks that saved them.
  const auto rank = static_cast<std::size_t>(ctx_.rank);
  resume_rng_state_ = resume_iter_in_epoch_ > 0 && rank < rng_states.size() &&
                              static_cast<int>(rng_states.size()) == ctx_.world_size
                          ? rng_states[rank]
                          : std::string();
}

void TrainLoop::add_hook(std::shared_ptr<Hook> hook, HookPriority priority) {
  if (!hook) throw std::invalid_argument("TrainLoop::add_hook: null hook");
  // After every hook of the same or a higher priority: equal priorities keep their order.
  const auto at =
      std::upper_bound(hooks_.begin(), hooks_.end(), priority,
                       [](HookPriority p, const Registered& r) { return p < r.priority; });
  hooks_.insert(at, Registered{std::move(hook), priority});
}

void TrainLoop::request_stop(const std::string& reason) {
  if (!stop_reason_) stop_reason_ = reason;
}

void TrainLoop::run() {
  model_.train();
  if (resumed_state_) call_hooks(hooks_, &Hook::after_load_checkpoint, *this, *resumed_state_);
  call_hooks(hooks_, &Hook::before_train, *this);
  while (progress_.epoch < progress_.max_epochs && progress_.global_iter < progress_.max_iters() &&
         !stop_reason_) {
    run_epoch();
    if (stop_reason_) break;
    if (val_loop_ && plan_->validate_after_epoch(progress_)) validate();
  }
  call_hooks(hooks_, &Hook::after_train, *this);
}

void TrainLoop::run_epoch() {
  // Epoch-derived global RNG: dropout & co. repeat exactly after a resume at this epoch.
  torch::manual_seed(data_seed(ctx_.seed, ctx_.rank, progress_.epoch, -1));
  // Resumed inside this epoch: skip the samples already trained on, and take the RNG back.
  const std::int64_t first = std::exchange(resume_iter_in_epoch_, 0);
  if (!resume_rng_state_.empty()) set_cpu_rng_state(std::exchange(resume_rng_state_, {}));
  const EpochData data = open_train_data(first);
  progress_.iter_in_epoch = first;
  call_hooks(hooks_, &Hook::before_train_epoch, *this);
  std::int64_t i = first;
  for (; i < progress_.iters_per_epoch && progress_.global_iter < progress_.max_iters() &&
         !stop_reason_;
       ++i) {
    progress_.iter_in_epoch = i;
    const auto k = static_cast<std::size_t>(i - first);
    const std::vector<std::vector<std::int64_t>>& micro = data.micro_batches.at(k);
    std::vector<Batch> host_batches;
    for (std::size_t m = 0; m < micro.size(); ++m) {
      std::optional<Batch> host_batch = data.loader->next();
      if (!host_batch) throw std::logic_error("loader ended early");
      host_batches.push_back(std::move(*host_batch));
    }
    run_iter(micro, std::move(host_batches), data.order.iteration_size(i));
    take_pending_signal();
    // IterBasedTrainLoop validates between iterations; a stop agreed at this boundary
    // (preemption) has saved already and leaves it to the resumed run's next one.
    if (!stop_reason_ && val_loop_ && plan_->validate_after_iter(progress_)) validate();
  }
  // An unfinished epoch is not reported as done: a stop, or the last iteration of an
  // IterBasedTrainLoop inside a pass.
  if (stop_reason_ || i < progress_.iters_per_epoch) return;
  progress_.epochs_completed = progress_.epoch + 1;
  call_hooks(hooks_, &Hook::after_train_epoch, *this);
  ++progress_.epoch;
}

TrainLoop::EpochData TrainLoop::open_train_data(std::int64_t first_iter) const {
  const LoaderSpec& spec = options_.train_loader;
  EpochData data;
  TrainDataOrder& order = data.order;
  order.dataset_size = train_data_->size();
  order.batch_size = spec.batch_size;
  order.batch_world_size = batch_world_size(ctx_);
  order.shuffle = spec.shuffle;
  order.seed = static_cast<std::uint64_t>(spec.seed.value_or(static_cast<std::int64_t>(ctx_.seed)));
  order.drop_last = spec.drop_last;
  const std::int64_t epoch = progress_.epoch;
  data.micro_batches = epoch_micro_batches(order, epoch, ctx_.rank, ctx_.world_size, first_iter);
  std::vector<std::vector<std::int64_t>> batches;
  for (const auto& iteration : data.micro_batches)
    batches.insert(batches.end(), iteration.begin(), iteration.end());
  const BatchLoaderOptions lo{spec.batch_size, spec.num_workers, 0, spec.drop_last};
  data.loader = std::make_unique<BatchLoader>(
      train_data_, std::move(batches), lo,
      [seed = ctx_.seed, rank = ctx_.rank, epoch](std::int64_t index) {
        return data_seed(seed, rank, epoch, index);
      },
      LoaderThreads{spec.num_workers_key(), {}});
  return data;
}

void TrainLoop::run_iter(const std::vector<std::vector<std::int64_t>>& micro_batches,
                         std::vector<Batch> host_batches, std::int64_t iteration_samples) {
  TrainIter iter;
  for (const auto& micro : micro_batches)
    iter.sample_indices.insert(iter.sample_indices.end(), micro.begin(), micro.end());
  iter.micro_batches = static_cast<std::int64_t>(micro_batches.size());
  Batch device_batch = host_batches.at(0).to(ctx_.device);
  iter.batch = &device_batch;
  call_hooks(hooks_, &Hook::before_train_iter, *this, iter);
  // A hook stopped training here (a checkpoint on SIGTERM): this iteration is not run.
  if (stop_reason_) return;
  iter.lr = optim_.lr();
  iter.momentum = optim_.momentum();
  forward(iter, host_batches, device_batch, iteration_samples);
  call_hooks(hooks_, &Hook::after_train_forward, *this, iter);
  update(iter);
  iter.log_vars = log_vars(iter.losses, iter.total_loss);
  call_hooks(hooks_, &Hook::after_train_iter, *this, iter);
  ++progress_.global_iter;
}

void TrainLoop::forward(TrainIter& iter, const std::vector<Batch>& host_batches,
                        Batch& device_batch, std::int64_t iteration_samples) {
  // Once per iteration (it broadcasts buffers, a collective; ranks may differ in micro-batches).
  if (ddp_ != nullptr) ddp_->prepare_forward();
  const std::size_t count = host_batches.size();
  LossMap sum;  // the earlier micro-batches' weighted terms, detached
  at::Tensor sum_total;
  for (std::size_t m = 0; m < count; ++m) {
    if (m > 0) device_batch = host_batches[m].to(ctx_.device);
    LossMap losses;
    {
      const AutocastScope autocast = optim_.autocast(ctx_.device.type());
      losses = model_.forward_train(device_batch);
    }
    at::Tensor total = total_loss(losses);
    // Each micro-batch's mean loss weighted by its share of the iteration (× world size, as
    // DDP averages over ranks): the averaged gradient is the mean over the iteration's samples.
    // At the batch world size the weight is exactly 1 and nothing is multiplied.
    const std::int64_t scaled = host_batches[m].size * ctx_.world_size;
    if (scaled != iteration_samples) {
      const double weight = static_cast<double>(scaled) / static_cast<double>(iteration_samples);
      for (auto& [name, value] : losses) value = value * weight;
      total = total * weight;
    }
    if (m + 1 < count) {
      // Gradients stay local (no_sync) until the iteration's last micro-batch.
      optim_.update_params(total, progress_.global_iter, /*last_micro=*/false);
      for (const auto& [name, value] : losses) {
        auto it = sum.find(name);
        if (it == sum.end()) {
          sum.emplace(name, value.detach());
        } else {
          it->second = it->second + value.detach();
        }
      }
      sum_total = sum_total.defined() ? sum_total + total.detach() : total.detach();
      continue;
    }
    if (sum_total.defined()) {
      for (auto& [name, value] : losses) {
        auto it = sum.find(name);
        if (it != sum.end()) value = it->second + value;
      }
      for (const auto& [name, value] : sum)
        if (losses.count(name) == 0) losses.emplace(name, value);
      total = sum_total + total;
    }
    iter.losses = std::move(losses);
    iter.total_loss = total;
  }
}

void TrainLoop::update(TrainIter& iter) {
  if (iter.skip) {
    optim_.discard_gradients();
    return;
  }
  iter.update = optim_.update_params(iter.total_loss, progress_.global_iter);
}

void TrainLoop::take_pending_signal() {
  if (pending_signal_ == nullptr) return;
  const int signal = pending_signal_->take();
  if (signal != 0) call_hooks(hooks_, &Hook::on_signal, *this, signal);
}

bool TrainLoop::can_validate() const {
  return val_data_ && val_evaluator_ != nullptr && options_.val_loader;
}

void TrainLoop::validate() {
  if (!val_loop_) return;
  call_hooks(hooks_, &Hook::before_val, *this);
  // Every rank evaluates rank 0's buffers (BatchNorm statistics), the ones the checkpoint
  // holds, as PyTorch's DDP forward does in eval mode: otherwise each rank's shard is scored
  // with its own statistics and `ddp3d test` on the checkpoint gives other numbers.
  if (ddp_ != nullptr) ddp_->prepare_forward();
  // Pictures for ValPicturesHook, by rank 0 alone (its files are on the node its log is): the
  // frames of its shard with a dataset index below `frames`, as `ddp3d test --show-count`.
  std::optional<DrawOptions> draw;
  if (val_pictures_ && ctx_.rank == 0 && val_evaluator_->can_draw()) {
    draw = *val_pictures_;
    std::filesystem::remove_all(draw->dir);
    std::filesystem::create_directories(draw->dir);
  }
  // Validation leaves the training's random state as it found it, so a run resumed after it
  // trains on exactly as the uninterrupted one (an IterBasedTrainLoop validates mid-epoch).
  const std::string rng_state = cpu_rng_state();
  ValResult result;
  result.metrics = val_loop_->run(EvalPass{.model = model_,
                                           .dataset = *val_data_,
                                           .loader = *options_.val_loader,
                                           .evaluator = *val_evaluator_,
                                           .ctx = ctx_,
                                           .draw = draw ? &*draw : nullptr});
  set_cpu_rng_state(rng_state);
  result.iters = eval_iters(val_data_->size(), ctx_, options_.val_loader->batch_size);
  call_hooks(hooks_, &Hook::after_val, *this, result);
}

void TrainLoop::save_checkpoint(const std::filesystem::path& path) {
  TrainingState state;
  state.epoch = progress_.epochs_completed;
  state.iter = progress_.global_iter;
  const LossScaleState scale = optim_.loss_scale_state();
  state.loss_scale = scale.scale;
  state.scale_growth_tracker = scale.growth_tracker;
  state.seed = static_cast<std::int64_t>(ctx_.seed);
  state.world_size = ctx_.world_size;
  state.batch_world_size = batch_world_size(ctx_);
  state.batch_size = options_.train_loader.batch_size;
  state.torch_rng_state = at::detail::getDefaultCPUGenerator().get_state();
  state.rank_rng_states = allgather_bytes(ctx_.pg, cpu_rng_state());
  call_hooks(hooks_, &Hook::before_save_checkpoint, *this, state);
  const bool writer = ctx_.rank == 0;
  if (writer) write_checkpoint_file(path, serialize_checkpoint(model_, optim_.optimizer(), state));
  const SavedCheckpoint saved{path, writer};
  call_hooks(hooks_, &Hook::after_save_checkpoint, *this, saved);
}

}  // namespace ddp3d::engine
