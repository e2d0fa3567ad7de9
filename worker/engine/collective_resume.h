// `--resume` across ranks. Rank 0 alone chooses the checkpoint (auto: the newest valid one in
// its work dir; else the given path) and reads it; its path and bytes are broadcast, so every
// rank loads the same weights, optimizer moments, loss scale, counters, seed and RNG states,
// also when the ranks' work dirs are not shared (one volume per pod). A failure on any rank
// (rank 0 cannot read it, a rank cannot load it, ranks loaded different states) fails every
// rank with the same message.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace ddp3d::dist {
class ProcessGroup;
}

namespace ddp3d::engine {

class Model;
struct TrainingState;

class ResumeFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ResumeSource {
  std::filesystem::path path;  // on rank 0
  std::string payload;         // the checkpoint's verified payload bytes
};

// `resume`: "auto" or a path. nullopt: auto found nothing (every rank starts from scratch).
// `warnings` (rank 0): skipped corrupt checkpoints, and other ranks' work dirs holding newer
// checkpoint names than rank 0's choice. Every rank must call it.
std::optional<ResumeSource> fetch_resume_checkpoint(dist::ProcessGroup* pg, int rank,
                                                    const std::string& resume,
                                                    const std::filesystem::path& work_dir,
                                                    std::int64_t iters_per_epoch,
                                                    std::vector<std::string>* warnings);

// A digest of the state a rank loaded: parameters, buffers, the optimizer's per-parameter state
// (Adam, AdamW, SGD), the counters, loss scale, seed and RNG states.
std::string state_fingerprint(Model& model, torch::optim::Optimizer& optimizer,
                              const TrainingState& state);

// Every rank passes its fingerprint, or "error: <what>" when it could not load; throws
// ResumeFailed on every rank unless all are equal and none failed. Every rank must call it.
void verify_same_state(dist::ProcessGroup* pg, const std::string& fingerprint,
                       const std::string& origin);

}  // namespace ddp3d::engine
