#include "worker/dist/ddp.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <unordered_set>

#include "common/log.h"
#include "worker/dist/averaging_backend.h"
#include "worker/dist/bucket_plan.h"
#include "worker/dist/process_group.h"

namespace ddp3d::dist {

namespace {

using Clock = std::chrono::steady_clock;
using torch::autograd::Node;
using torch::autograd::variable_list;

std::string shape_string(const std::vector<std::int64_t>& meta, std::size_t& pos) {
  // meta layout per parameter: dtype, ndim, sizes...
  std::ostringstream s;
  const auto dtype = static_cast<c10::ScalarType>(meta[pos]);
  const auto ndim = meta[pos + 1];
  s << "[";
  for (std::int64_t d = 0; d < ndim; ++d) s << (d ? ", " : "") << meta[pos + 2 + d];
  s << "] " << c10::toString(dtype);
  pos += 2 + static_cast<std::size_t>(ndim);
  return s.str();
}

at::Tensor flat_cat(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const auto& t : tensors) flat.push_back(t.detach().reshape({-1}));
  return at::cat(flat);
}

// Broadcasts `tensors` (grouped by dtype and device into one flat tensor each) from `root`
// and writes the result back in place.
void broadcast_coalesced(c10d::Backend& backend, const std::vector<at::Tensor>& tensors, int root) {
  std::map<std::pair<int, std::string>, std::vector<at::Tensor>> groups;
  for (const auto& t : tensors) {
    groups[{static_cast<int>(t.scalar_type()), t.device().str()}].push_back(t);
  }
  c10::NoGradGuard no_grad;
  for (auto& [key, members] : groups) {
    std::vector<at::Tensor> flat{flat_cat(members)};
    c10d::BroadcastOptions opts;
    opts.rootRank = root;
    backend.broadcast(flat, opts)->wait();
    std::int64_t offset = 0;
    for (auto& t : members) {
      t.copy_(flat[0].narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
  }
}

}  // namespace

struct DistributedDataParallel::State {
  struct Param {
    std::string name;
    at::Tensor tensor;
    c10::intrusive_ptr<Node> accumulator;  // kept alive: the variable only holds it weakly
    std::uintptr_t hook_key = 0;
    std::size_t bucket = 0;
    at::Tensor bucket_view;  // this parameter's slice of its bucket, shaped like it
    // The same memory as a plain tensor (not an autograd view, so detach_() works on it):
    // what param.grad() becomes with gradient_as_bucket_view.
    at::Tensor grad_alias;
  };
  struct Bucket {
    std::vector<std::size_t> params;
    at::Tensor flat;  // gradients, then (last bucket, float types) the missing map
    std::int64_t grad_numel = 0;
    std::size_t pending = 0;
    c10::intrusive_ptr<ReduceWork> work;  // this step's all-reduce, averaging the bucket
  };
  enum class Phase { kIdle, kArmed, kInBackward, kFinalized };
  // Runs after a parameter's AccumulateGrad node: param.grad() holds this backward's gradient.
  struct ReadyHook : torch::autograd::FunctionPostHook {
    ReadyHook(State* s, std::size_t i) : state(s), index(i) {}
    variable_list operator()(const variable_list& outputs, const variable_list&) override {
      state->on_gradient_ready(index);
      return outputs;
    }
    State* state;
    std::size_t index;
  };

  State(c10d::Backend& b, SharedMemoryAllReduce* shm, int r, int w)
      : backend(b), reducer(b, shm, r, w), rank(r), world(w) {}

  c10d::Backend& backend;  // set-up collectives (parameter check, broadcasts)
  // What carries the buckets: shared memory on one node, else the backend.
  AveragingBackend reducer;
  int rank;
  int world;
  DdpOptions options;
  std::vector<Param> params;
  std::vector<at::Tensor> buffers;
  std::vector<Bucket> buckets;

  // One entry per parameter, all-reduced with the last bucket: 1 where this rank had no
  // gradient for it (without find_unused_parameters: an error; with it: locally unused).
  at::Tensor missing_map;
  bool missing_map_in_bucket = false;
  c10::intrusive_ptr<ReduceWork> missing_work;

  std::mutex mu;
  Phase phase = Phase::kIdle;
  bool require_sync = true;
  std::size_t next_bucket = 0;
  std::vector<char> ready;
  std::vector<char> missing;
  std::vector<char> locally_unused;
  DdpStepStats stats;
  DdpStepStats last;
  std::int64_t step = 0;
  std::function<void(const BucketEvent&)> observer;

  void arm() {
    std::fill(ready.begin(), ready.end(), 0);
    std::fill(missing.begin(), missing.end(), 0);
    std::fill(locally_unused.begin(), locally_unused.end(), 0);
    for (auto& b : buckets) {
      b.pending = b.params.size();
      b.work.reset();
    }
    missing_work.reset();
    next_bucket = 0;
    stats = DdpStepStats{};
    stats.step = step;
    phase = Phase::kArmed;
  }

  void on_gradient_ready(std::size_t index) {
    std::lock_guard<std::mutex> lock(mu);
    if (!require_sync) return;  // no_sync: gradients accumulate locally
    if (phase == Phase::kIdle || phase == Phase::kFinalized) {
      if (options.find_unused_parameters) {
        throw std::logic_error(
            "DDP: find_unused_parameters=true needs ddp.prepare_backward(outputs) after forward "
            "and before backward");
      }
      arm();  // prepare_backward is optional without unused-parameter detection
    }
    const auto now = Clock::now();
    if (phase == Phase::kArmed) {
      phase = Phase::kInBackward;
      stats.backward_start = now;
      // Like PyTorch's reducer: the engine calls us once the whole backward pass is done.
      torch::autograd::Engine::get_default_engine().queue_callback([this] { finalize(); });
      if (options.find_unused_parameters) {
        for (std::size_t i = 0; i < params.size(); ++i) {
          if (locally_unused[i]) mark_ready(i, /*has_grad=*/false, /*in_backward=*/true);
        }
      }
    }
    if (ready[index] && locally_unused[index]) {
      throw std::runtime_error(
          "DDP: parameter '" + params[index].name +
          "' was found unused (the outputs given to prepare_backward do not reach it) but "
          "received a gradient; pass every tensor backward starts from to prepare_backward");
    }
    if (ready[index]) {
      throw std::runtime_error(
          "DDP: parameter '" + params[index].name +
          "' received a gradient twice in one backward pass (several backward passes through "
          "the same graph without finalize, or a reentrant backward); DDP supports one "
          "backward per synchronised step");
    }
    mark_ready(index, /*has_grad=*/true, /*in_backward=*/true);
    stats.backward_end = Clock::now();
  }

  // Caller holds mu.
  void mark_ready(std::size_t index, bool has_grad, bool in_backward) {
    Param& p = params[index];
    ready[index] = 1;
    at::Tensor& grad = p.tensor.mutable_grad();
    const bool aliased = grad.defined() && grad.data_ptr() == p.bucket_view.data_ptr();
    if (aliased && !has_grad) {
      // A locally unused parameter whose gradient may have to stay as it was: detach it from
      // the bucket before the bucket is overwritten.
      grad = grad.clone();
    }
    if (grad.defined()) {
      // The bucket's all-reduce averages: a gradient accumulated in the bucket (aliased)
      // needs no pass here at all.
      if (!aliased || !has_grad) p.bucket_view.copy_(grad);
    } else {
      p.bucket_view.zero_();
    }
    // A locally unused parameter still contributes what it accumulated under no_sync.
    missing[index] = has_grad ? 0 : 1;
    Bucket& b = buckets[p.bucket];
    if (--b.pending == 0) {
      while (next_bucket < buckets.size() && buckets[next_bucket].pending == 0) {
        launch(next_bucket++, in_backward);
      }
    }
  }

  void launch(std::size_t index, bool in_backward) {
    Bucket& b = buckets[index];
    const bool last_bucket = index + 1 == buckets.size();
    if (last_bucket) write_missing_map();
    // Taken before the hand-over: a shared-memory all-reduce may finish before it returns.
    const auto launched = Clock::now();
    b.work = reducer.reduce(b.flat, c10d::ReduceOp::AVG);
    if (last_bucket && !missing_map_in_bucket) {
      missing_work = reducer.reduce(missing_map, c10d::ReduceOp::SUM);
    }
    BucketEvent event{static_cast<int>(index), launched, in_backward};
    stats.timeline.push_back(event);
    stats.bytes_reduced += b.flat.numel() * static_cast<std::int64_t>(b.flat.element_size());
    ++stats.buckets;
    if (observer) observer(event);
  }

  // 1 per parameter this rank has no gradient for; inside the averaged bucket the entries
  // are world, so that the average counts the ranks too.
  void write_missing_map() {
    auto cpu = at::empty({static_cast<std::int64_t>(missing.size())}, at::kFloat);
    auto* data = cpu.data_ptr<float>();
    const float one = missing_map_in_bucket ? static_cast<float>(world) : 1.0f;
    for (std::size_t i = 0; i < missing.size(); ++i) data[i] = missing[i] ? one : 0.0f;
    missing_map.copy_(cpu);
  }

  // Completes the step: launches what is left, waits, checks and writes averaged gradients.
  // Called by the autograd engine at the end of backward, and by finalize_backward().
  void finalize() {
    std::lock_guard<std::mutex> lock(mu);
    if (phase != Phase::kInBackward) return;  // no_sync, nothing ran, or already finalized
    const auto begin = Clock::now();
    // Parameters whose hook never ran: their slice is zero and flagged missing, so every
    // rank launches the same collectives in the same order and learns about it together.
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!ready[i]) mark_ready(i, /*has_grad=*/false, /*in_backward=*/false);
    }
    const auto wait_begin = Clock::now();
    for (auto& b : buckets) b.work->wait();
    if (missing_work) missing_work->wait();
    stats.allreduce_wait_s = std::chrono::duration<double>(Clock::now() - wait_begin).count();
    for (auto& event : stats.timeline) {
      event.completed = buckets[static_cast<std::size_t>(event.bucket)].work->finished_at();
    }

    const auto counts_tensor = missing_map.to(at::kCPU, at::kFloat);
    const float* counts = counts_tensor.data_ptr<float>();
    std::vector<int> ranks_missing(params.size());
    bool any_missing = false;
    for (std::size_t i = 0; i < params.size(); ++i) {
      ranks_missing[i] = static_cast<int>(std::lround(counts[i]));
      any_missing = any_missing || ranks_missing[i] > 0;
    }
    phase = Phase::kFinalized;
    ++step;
    if (any_missing && !options.find_unused_parameters) {
      stats.finalized = Clock::now();
      last = stats;
      throw std::runtime_error(unused_error(ranks_missing));
    }
    c10::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (ranks_missing[i] == world) continue;  // unused everywhere: gradient left as it was
      Param& p = params[i];
      at::Tensor& grad = p.tensor.mutable_grad();
      if (options.gradient_as_bucket_view) {
        grad = p.grad_alias;  // already the alias when the gradient was accumulated in place
      } else if (grad.defined()) {
        grad.copy_(p.bucket_view);
      } else {
        grad = p.bucket_view.clone();
      }
    }
    stats.finalized = Clock::now();
    stats.finalize_s = std::chrono::duration<double>(stats.finalized - begin).count();
    last = stats;
  }

  std::string unused_error(const std::vector<int>& ranks_missing) const {
    std::ostringstream s;
    s << "DDP: expected every parameter to receive a gradient in this backward pass, but ";
    int listed = 0;
    int total = 0;
    std::ostringstream names;
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (ranks_missing[i] == 0) continue;
      ++total;
      if (listed++ < 20) {
        names << (listed > 1 ? ", " : "") << "'" << params[i].name << "' (index " << i
              << ", no gradient on " << ranks_missing[i] << " of " << world << " ranks"
              << (missing[i] ? ", including this rank " + std::to_string(rank) : "") << ")";
      }
    }
    s << total << " parameter(s) did not: " << names.str() << (total > listed ? ", ..." : "")
      << ". This means the module has parameters that were not used in producing the loss. "
         "Enable unused parameter detection with find_unused_parameters=True (DdpOptions"
         "::find_unused_parameters, config key find_unused_parameters: true), or make sure "
         "every forward output takes part in the loss.";
    return s.str();
  }

  // Collective. The shared-memory all-reduce reads peers' buckets where they are when the
  // buckets live in shared memory; if that segment cannot be had, the buckets stay private
  // and go through the all-reduce's slots (one copy more).
  void place_buckets_in_shared_memory() {
    std::vector<std::size_t> which;
    std::vector<std::pair<std::int64_t, at::ScalarType>> specs;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      if (!reducer.in_shared_memory(buckets[b].flat)) continue;
      which.push_back(b);
      specs.emplace_back(buckets[b].flat.numel(), buckets[b].flat.scalar_type());
    }
    if (specs.empty()) return;
    std::string why;
    auto shared = reducer.allocate_shared(specs, &why);
    if (shared.empty()) {
      if (rank == 0) {
        log::warning("DDP: gradient buckets stay in private memory (" + why +
                     "); the shared-memory all-reduce copies them through its slots");
      }
      return;
    }
    for (std::size_t k = 0; k < which.size(); ++k) buckets[which[k]].flat = shared[k];
  }

  // Parameters whose gradient accumulators `outputs` do not reach in the autograd graph.
  void find_unused(const std::vector<at::Tensor>& outputs) {
    std::unordered_set<const Node*> seen;
    std::vector<Node*> stack;
    for (const auto& out : outputs) {
      if (!out.defined()) continue;
      if (const auto& fn = out.grad_fn()) {
        if (seen.insert(fn.get()).second) stack.push_back(fn.get());
      } else if (out.requires_grad()) {
        // A leaf output: its own accumulator is the graph.
        auto acc = torch::autograd::impl::try_get_grad_accumulator(out);
        if (acc && seen.insert(acc.get()).second) stack.push_back(acc.get());
      }
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const auto& edge : n->next_edges()) {
        if (Node* next = edge.function.get(); next && seen.insert(next).second) {
          stack.push_back(next);
        }
      }
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
      locally_unused[i] = seen.count(params[i].accumulator.get()) ? 0 : 1;
    }
  }
};

namespace {

// Parameter metadata for the cross-rank check: dtype, ndim, sizes... per parameter.
std::vector<std::int64_t> parameter_meta(const std::vector<at::Tensor>& params) {
  std::vector<std::int64_t> meta;
  for (const auto& p : params) {
    meta.push_back(static_cast<std::int64_t>(p.scalar_type()));
    meta.push_back(p.dim());
    for (auto s : p.sizes()) meta.push_back(s);
  }
  return meta;
}

std::vector<at::Tensor> allgather_int64(c10d::Backend& backend, const at::Tensor& local,
                                        int world) {
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < world; ++r) out[0].push_back(at::empty_like(local));
  std::vector<at::Tensor> in{local};
  backend.allgather(out, in)->wait();
  std::vector<at::Tensor> cpu;
  for (auto& t : out[0]) cpu.push_back(t.to(at::kCPU));
  return cpu;
}

// Collective. Throws the same error on every rank when the ranks' parameters differ.
void verify_same_parameters(c10d::Backend& backend, int world, int rank,
                            const std::vector<std::string>& names,
                            const std::vector<at::Tensor>& params, at::Device device) {
  const auto meta = parameter_meta(params);
  auto header = at::tensor(std::vector<std::int64_t>{static_cast<std::int64_t>(params.size()),
                                                     static_cast<std::int64_t>(meta.size())},
                           at::kLong)
                    .to(device);
  const auto headers = allgather_int64(backend, header, world);
  std::int64_t max_len = 0;
  for (const auto& h : headers) max_len = std::max(max_len, h[1].item<std::int64_t>());
  auto padded = at::full({max_len}, -1, at::kLong);
  std::copy(meta.begin(), meta.end(), padded.data_ptr<std::int64_t>());
  const auto metas = allgather_int64(backend, padded.to(device), world);

  auto name_of = [&](std::size_t i) {
    return i < names.size() ? "'" + names[i] + "'" : std::string("#") + std::to_string(i);
  };
  const auto count0 = static_cast<std::size_t>(headers[0][0].item<std::int64_t>());
  const auto* m0 = metas[0].data_ptr<std::int64_t>();
  const std::vector<std::int64_t> meta0(m0, m0 + max_len);
  for (int r = 1; r < world; ++r) {
    const auto count_r = static_cast<std::size_t>(headers[r][0].item<std::int64_t>());
    const auto* mr = metas[r].data_ptr<std::int64_t>();
    const std::vector<std::int64_t> meta_r(mr, mr + max_len);
    std::size_t p0 = 0, pr = 0;
    for (std::size_t i = 0; i < std::min(count0, count_r); ++i) {
      const std::size_t start0 = p0, start_r = pr;
      const auto s0 = shape_string(meta0, p0);
      const auto sr = shape_string(meta_r, pr);
      if (s0 != sr || !std::equal(meta0.begin() + static_cast<std::ptrdiff_t>(start0),
                                  meta0.begin() + static_cast<std::ptrdiff_t>(p0),
                                  meta_r.begin() + static_cast<std::ptrdiff_t>(start_r))) {
        std::ostringstream message;
        message << "DDP: model parameters differ across ranks: parameter " << name_of(i)
                << " (index " << i << ") is " << s0 << " on rank 0 but " << sr << " on rank " << r
                << " (this is rank " << rank << "); every rank must build the same model";
        throw std::runtime_error(message.str());
      }
    }
    if (count0 != count_r) {
      throw std::runtime_error(
          "DDP: model parameters differ across ranks: rank 0 has " + std::to_string(count0) +
          " parameters but rank " + std::to_string(r) + " has " + std::to_string(count_r) +
          "; the first parameter only one of them has is index " +
          std::to_string(std::min(count0, count_r)) + " (" + name_of(std::min(count0, count_r)) +
          " here on rank " + std::to_string(rank) + "); every rank must build the same model");
    }
  }
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<torch::nn::Module> module,
                                                 ProcessGroup& pg, DdpOptions options)
    : module_(std::move(module)), options_(options) {
  if (!module_) throw std::invalid_argument("DDP: module is null");
  if (options_.bucket_cap_mb <= 0 || options_.first_bucket_cap_mb <= 0) {
    throw std::invalid_argument("DDP: bucket_cap_mb and first_bucket_cap_mb must be positive");
  }
  if (options_.broadcast_from_rank < 0 || options_.broadcast_from_rank >= pg.size()) {
    throw std::invalid_argument("DDP: broadcast_from_rank " +
                                std::to_string(options_.broadcast_from_rank) +
                                " is outside the process group of " + std::to_string(pg.size()));
  }
  state_ = std::make_unique<State>(
      pg.backend(), options_.shared_memory_allreduce ? pg.shared_memory_allreduce() : nullptr,
      pg.rank(), pg.size());
  State& s = *state_;
  s.options = options_;

  std::vector<std::string> names;
  std::vector<at::Tensor> tensors;
  for (const auto& item : module_->named_parameters(/*recurse=*/true)) {
    if (!item.value().requires_grad()) continue;
    names.push_back(item.key());
    tensors.push_back(item.value());
  }
  if (tensors.empty()) {
    throw std::invalid_argument("DDP: the module has no parameters that require gradients");
  }
  const at::Device device = tensors.front().device();
  if (s.world > 1) verify_same_parameters(s.backend, s.world, s.rank, names, tensors, device);

  for (const auto& item : module_->named_buffers(/*recurse=*/true)) {
    s.buffers.push_back(item.value());
  }
  if (s.world > 1) {
    std::vector<at::Tensor> state_tensors = tensors;
    state_tensors.insert(state_tensors.end(), s.buffers.begin(), s.buffers.end());
    broadcast_coalesced(s.backend, state_tensors, options_.broadcast_from_rank);
  }

  // Buckets.
  std::vector<BucketPlanInput> plan_in;
  std::map<std::pair<int, std::string>, std::int64_t> keys;
  for (const auto& t : tensors) {
    auto key = std::make_pair(static_cast<int>(t.scalar_type()), t.device().str());
    auto it = keys.emplace(key, static_cast<std::int64_t>(keys.size())).first;
    plan_in.push_back({t.numel() * static_cast<std::int64_t>(t.element_size()), it->second});
  }
  constexpr double kMiB = 1024.0 * 1024.0;
  const auto plan =
      plan_buckets(plan_in, static_cast<std::int64_t>(options_.first_bucket_cap_mb * kMiB),
                   static_cast<std::int64_t>(options_.bucket_cap_mb * kMiB));

  s.params.resize(tensors.size());
  s.buckets.resize(plan.size());
  const auto n_params = static_cast<std::int64_t>(tensors.size());
  for (std::size_t b = 0; b < plan.size(); ++b) {
    State::Bucket& bucket = s.buckets[b];
    bucket.params = plan[b];
    const at::Tensor& first = tensors[plan[b].front()];
    for (auto i : plan[b]) bucket.grad_numel += tensors[i].numel();
    const bool last = b + 1 == plan.size();
    const bool map_fits =
        last && (first.scalar_type() == at::kFloat || first.scalar_type() == at::kDouble);
    bucket.flat = at::zeros({bucket.grad_numel + (map_fits ? n_params : 0)}, first.options());
    if (last) s.missing_map_in_bucket = map_fits;
  }
  // Views into the buckets are taken only now: the buckets may have moved to shared memory.
  s.place_buckets_in_shared_memory();
  for (std::size_t b = 0; b < plan.size(); ++b) {
    State::Bucket& bucket = s.buckets[b];
    if (b + 1 == plan.size()) {
      s.missing_map = s.missing_map_in_bucket
                          ? bucket.flat.narrow(0, bucket.grad_numel, n_params)
                          : at::zeros({n_params}, bucket.flat.options().dtype(at::kFloat));
    }
    std::int64_t offset = 0;
    for (auto i : plan[b]) {
      State::Param& p = s.params[i];
      p.name = names[i];
      p.tensor = tensors[i];
      p.bucket = b;
      p.bucket_view = bucket.flat.narrow(0, offset, tensors[i].numel()).view(tensors[i].sizes());
      {
        c10::NoGradGuard no_grad;
        p.grad_alias = at::empty({0}, bucket.flat.options());
        p.grad_alias.set_(bucket.flat.storage(), p.bucket_view.storage_offset(),
                          p.bucket_view.sizes(), p.bucket_view.strides());
      }
      offset += tensors[i].numel();
    }
  }
  s.ready.assign(tensors.size(), 0);
  s.missing.assign(tensors.size(), 0);
  s.locally_unused.assign(tensors.size(), 0);

  for (std::size_t i = 0; i < s.params.size(); ++i) {
    State::Param& p = s.params[i];
    p.accumulator = torch::autograd::impl::grad_accumulator(p.tensor);
    p.hook_key = p.accumulator->add_post_hook(std::make_unique<State::ReadyHook>(&s, i));
  }
}

DistributedDataParallel::~DistributedDataParallel() {
  if (!state_) return;
  for (auto& p : state_->params) {
    if (p.accumulator) p.accumulator->del_post_hook(p.hook_key);
  }
}

void DistributedDataParallel::prepare_forward() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.phase == State::Phase::kInBackward) {
      throw std::logic_error(
          "DDP: the previous backward pass was not finalized before this forward; call "
          "ddp.finalize_backward() after loss.backward() (its all-reduces are still pending)");
    }
  }
  if (options_.broadcast_buffers && s.world > 1 && !s.buffers.empty()) {
    broadcast_coalesced(s.backend, s.buffers, options_.broadcast_from_rank);
  }
}

void DistributedDataParallel::prepare_backward(const std::vector<at::Tensor>& outputs) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.phase == State::Phase::kInBackward) {
    throw std::logic_error(
        "DDP: prepare_backward called while the previous backward pass is not finalized");
  }
  if (!s.require_sync) {
    s.phase = State::Phase::kIdle;
    return;
  }
  s.arm();
  if (options_.find_unused_parameters) s.find_unused(outputs);
}

const DdpStepStats& DistributedDataParallel::finalize_backward() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    // Armed for a synchronised step, yet not one gradient hook ran: averaging would be
    // skipped silently and the ranks would drift apart. The usual cause is parameters swapped
    // after construction (torch::load into the module creates new gradient accumulators).
    if (state_->phase == State::Phase::kArmed) {
      throw std::runtime_error(
          "DDP: no gradient hook ran in this backward pass, so nothing was all-reduced. Were "
          "the module's parameters replaced after DistributedDataParallel was built (e.g. "
          "torch::load into the module)? Build DDP after loading a checkpoint.");
    }
  }
  state_->finalize();
  return state_->last;
}

const DdpStepStats& DistributedDataParallel::last_step_stats() const {
  return state_->last;
}

void DistributedDataParallel::set_bucket_launch_observer(
    std::function<void(const BucketEvent&)> observer) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->observer = std::move(observer);
}

std::vector<std::vector<std::size_t>> DistributedDataParallel::bucket_assignment() const {
  std::vector<std::vector<std::size_t>> out;
  for (const auto& b : state_->buckets) out.push_back(b.params);
  return out;
}

DistributedDataParallel::NoSyncGuard::NoSyncGuard(DistributedDataParallel& ddp) : ddp_(ddp) {
  std::lock_guard<std::mutex> lock(ddp_.state_->mu);
  previous_ = ddp_.state_->require_sync;
  ddp_.state_->require_sync = false;
}

DistributedDataParallel::NoSyncGuard::~NoSyncGuard() {
  std::lock_guard<std::mutex> lock(ddp_.state_->mu);
  ddp_.state_->require_sync = previous_;
}

}  // namespace ddp3d::dist
