#include "worker/engine/checkpoint.h"

#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <sstream>
#include <stdexcept>

#include "worker/engine/checkpoint_file.h"
#include "worker/engine/model.h"

namespace ddp3d::engine {

std::string serialize_checkpoint(Model& model, torch::optim::Optimizer& optimizer,
                                 const TrainingState& state) {
  torch::serialize::OutputArchive root;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  root.write("model", model_archive);
  torch::serialize::OutputArchive optim_archive;
  optimizer.save(optim_archive);
  root.write("optimizer", optim_archive);
  root.write("epoch", c10::IValue(state.epoch));
  root.write("iter", c10::IValue(state.iter));
  root.write("loss_scale", c10::IValue(state.loss_scale));
  root.write("scale_growth_tracker", c10::IValue(state.scale_growth_tracker));
  root.write("seed", c10::IValue(state.seed));
  root.write("world_size", c10::IValue(state.world_size));
  root.write("batch_world_size", c10::IValue(state.batch_world_size));
  root.write("batch_size", c10::IValue(state.batch_size));
  if (state.torch_rng_state.defined()) root.write("torch_rng_state", state.torch_rng_state);
  if (!state.rank_rng_states.empty()) {
    c10::List<std::string> states;
    for (const std::string& s : state.rank_rng_states) states.push_back(s);
    root.write("rank_rng_states", c10::IValue(states));
  }
  if (!state.hook_tensors.empty()) {
    torch::serialize::OutputArchive hooks;
    for (const auto& [key, tensor] : state.hook_tensors) hooks.write(key, tensor);
    root.write("hooks", hooks);
  }
  std::ostringstream out;
  root.save_to(out);
  return out.str();
}

void deserialize_checkpoint(const std::string& payload, const std::string& origin, Model& model,
                            torch::optim::Optimizer* optimizer, TrainingState* state) {
  try {
    torch::serialize::InputArchive root;
    root.load_from(payload.data(), payload.size());
    torch::serialize::InputArchive model_archive;
    root.read("model", model_archive);
    // Module::load swaps each tensor's storage (Tensor::set_) and so accepts any shape: check
    // the shapes ourselves.
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes;
    for (const auto& item : model.named_parameters())
      shapes.emplace_back(item.key(), item.value().sizes().vec());
    for (const auto& item : model.named_buffers())
      shapes.emplace_back(item.key(), item.value().sizes().vec());
    model.load(model_archive);
    std::size_t i = 0;
    auto check = [&](const std::string& name, const at::Tensor& t) {
      if (t.sizes().vec() != shapes[i++].second) {
        std::ostringstream msg;
        msg << "checkpoint " << origin << " does not fit this model: " << name << " has shape "
            << t.sizes() << " in the checkpoint, the model expects "
            << at::IntArrayRef(shapes[i - 1].second);
        throw std::runtime_error(msg.str());
      }
    };
    for (const auto& item : model.named_parameters()) check(item.key(), item.value());
    for (const auto& item : model.named_buffers()) check(item.key(), item.value());
    if (optimizer != nullptr) {
      torch::serialize::InputArchive optim_archive;
      root.read("optimizer", optim_archive);
      optimizer->load(optim_archive);
    }
    if (state != nullptr) {
      c10::IValue v;
      root.read("epoch", v);
      state->epoch = v.toInt();
      root.read("iter", v);
      state->iter = v.toInt();
      root.read("loss_scale", v);
      state->loss_scale = v.toDouble();
      root.read("scale_growth_tracker", v);
      state->scale_growth_tracker = v.toInt();
      root.read("seed", v);
      state->seed = v.toInt();
      root.read("world_size", v);
      state->world_size = v.toInt();
      // Absent from checkpoints written before the batch world size existed.
      state->batch_world_size = root.try_read("batch_world_size", v) ? v.toInt() : 0;
      state->batch_size = root.try_read("batch_size", v) ? v.toInt() : 0;
      at::Tensor rng;
      if (root.try_read("torch_rng_state", rng)) state->torch_rng_state = rng;
      state->rank_rng_states.clear();
      c10::IValue states;
      if (root.try_read("rank_rng_states", states)) {
        for (const c10::IValue& s : states.toListRef())
          state->rank_rng_states.push_back(s.toStringRef());
      }
      state->hook_tensors.clear();
      torch::serialize::InputArchive hooks;
      if (root.try_read("hooks", hooks)) {
        for (const std::string& key : hooks.keys()) {
          at::Tensor t;
          hooks.read(key, t);
          state->hook_tensors[key] = t;
        }
      }
    }
  } catch (const c10::Error& e) {
    throw std::runtime_error("checkpoint " + origin +
                             " does not fit this model/optimizer: " + e.what_without_backtrace());
  }
}

std::filesystem::path find_resume_checkpoint(const std::filesystem::path& work_dir,
                                             std::vector<std::string>* warnings,
                                             std::int64_t iters_per_epoch) {
  for (const std::filesystem::path& candidate : list_checkpoints(work_dir, iters_per_epoch)) {
    try {
      read_checkpoint_file(candidate);
      return candidate;
    } catch (const CorruptCheckpoint& e) {
      if (warnings != nullptr) {
        warnings->push_back(std::string(e.what()) + "; falling back to an older checkpoint");
      }
    }
  }
  return {};
}

}  // namespace ddp3d::engine
