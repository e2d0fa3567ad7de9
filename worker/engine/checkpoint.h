// What a training checkpoint holds and how it maps to bytes: model, optimizer, the schedule's
// position, the loss scaler, RNG state and the counters, as one torch archive inside the
// integrity-checked container of checkpoint_file.h.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace ddp3d::engine {

class Model;

struct TrainingState {
  std::int64_t epoch = 0;  // epochs completed
  std::int64_t iter = 0;   // global iterations completed (the schedules' position)
  double loss_scale = 0;   // fp16 dynamic loss scale (0: not used)
  std::int64_t scale_growth_tracker = 0;
  std::int64_t seed = 0;        // randomness.seed the run used (data RNG streams derive from it)
  std::int64_t world_size = 1;  // the world size it was written at
  // The world size and per-rank batch size the global batch was defined at (0: unknown, an
  // older checkpoint; then world_size and the current batch size). A run with the same global
  // batch resumes at its exact sample position at any world size.
  std::int64_t batch_world_size = 0;
  std::int64_t batch_size = 0;
  at::Tensor torch_rng_state;  // rank 0's CPU generator state (undefined: not saved)
  // Every rank's CPU generator state in rank order (empty: not saved; older checkpoints).
  std::vector<std::string> rank_rng_states;
  // What hooks keep across a resume (e.g. EMAHook's weights), by key; absent from the file
  // when empty, so a run without such hooks writes the same bytes as before they existed.
  std::map<std::string, at::Tensor> hook_tensors;
};

// Serialises model, optimizer and state into checkpoint payload bytes.
std::string serialize_checkpoint(Model& model, torch::optim::Optimizer& optimizer,
                                 const TrainingState& state);

// Restores from payload bytes. `optimizer` and `state` may be null (weights only, for test).
// Throws std::runtime_error naming `origin` (the file) when the payload does not fit the model.
void deserialize_checkpoint(const std::string& payload, const std::string& origin, Model& model,
                            torch::optim::Optimizer* optimizer, TrainingState* state);

// The checkpoint `--resume auto` continues from: the newest one in `work_dir` that reads and
// verifies. Corrupt ones are skipped; each skip is reported in `warnings` (naming the file and
// the reason). Returns an empty path when there is none.
std::filesystem::path find_resume_checkpoint(const std::filesystem::path& work_dir,
                                             std::vector<std::string>* warnings,
                                             std::int64_t iters_per_epoch = 0);

}  // namespace ddp3d::engine
