#include "worker/engine/collective_resume.h"

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <cstdio>
#include <stdexcept>

#include "worker/engine/checkpoint.h"
#include "worker/engine/checkpoint_file.h"
#include "worker/engine/collectives.h"
#include "worker/engine/model.h"

namespace ddp3d::engine {
namespace {

// FNV-1a, 64 bits: a digest to compare ranks with, not a defence against tampering.
class Digest {
 public:
  void add(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 0x100000001b3ULL;
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add_value(s.size());
  }
  template <typename T>
  void add_value(T v) {
    add(&v, sizeof v);
  }
  void add(const at::Tensor& t) {
    if (!t.defined()) return add_value(-1);
    const at::Tensor c = t.detach().to(at::kCPU).contiguous();
    add_value(static_cast<int>(c.scalar_type()));
    for (std::int64_t d : c.sizes()) add_value(d);
    add(c.data_ptr(), c.nbytes());
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

void add_param_state(Digest& d, torch::optim::OptimizerParamState& s) {
  if (auto* a = dynamic_cast<torch::optim::AdamWParamState*>(&s)) {
    d.add_value(a->step());
    d.add(a->exp_avg());
    d.add(a->exp_avg_sq());
    d.add(a->max_exp_avg_sq());
  } else if (auto* b = dynamic_cast<torch::optim::AdamParamState*>(&s)) {
    d.add_value(b->step());
    d.add(b->exp_avg());
    d.add(b->exp_avg_sq());
    d.add(b->max_exp_avg_sq());
  } else if (auto* m = dynamic_cast<torch::optim::SGDParamState*>(&s)) {
    d.add(m->momentum_buffer());
  } else {
    throw std::logic_error("state_fingerprint: an optimizer state of an unknown type");
  }
}

}  // namespace

std::optional<ResumeSource> fetch_resume_checkpoint(dist::ProcessGroup* pg, int rank,
                                                    const std::string& resume,
                                                    const std::filesystem::path& work_dir,
                                                    std::int64_t iters_per_epoch,
                                                    std::vector<std::string>* warnings) {
  // Rank 0's verdict first: "ok <path>", "none", or "error <message>".
  std::string verdict;
  ResumeSource source;
  if (rank == 0) {
    try {
      source.path = resume == "auto" ? find_resume_checkpoint(work_dir, warnings, iters_per_epoch)
                                     : std::filesystem::path(resume);
      if (!source.path.empty()) source.payload = read_checkpoint_file(source.path);
      verdict = source.path.empty() ? "none" : "ok " + source.path.string();
    } catch (const std::exception& e) {
      verdict = std::string("error ") + e.what();
    }
  }
  verdict = broadcast_bytes(pg, verdict);
  if (verdict.rfind("error ", 0) == 0) throw ResumeFailed("resume on rank 0: " + verdict.substr(6));
  // What each rank's own work dir holds, for a warning when rank 0's is behind (per-pod
  // volumes): only rank 0's is used.
  if (resume == "auto") {
    const std::vector<std::filesystem::path> mine = list_checkpoints(work_dir, iters_per_epoch);
    const std::vector<std::string> newest =
        allgather_bytes(pg, mine.empty() ? std::string() : mine.front().filename().string());
    if (rank == 0 && warnings != nullptr) {
      const std::string chosen = source.path.empty() ? "" : source.path.filename().string();
      for (std::size_t r = 1; r < newest.size(); ++r) {
        if (!newest[r].empty() && newest[r] != chosen) {
          warnings->push_back("rank " + std::to_string(r) + "'s work dir holds " + newest[r] +
                              ", rank 0 resumes from " + (chosen.empty() ? "nothing" : chosen) +
                              ": only rank 0's work dir is read, and its checkpoint is sent to "
                              "every rank");
        }
      }
    }
  }
  if (verdict == "none") return std::nullopt;
  source.path = verdict.substr(3);
  source.payload = broadcast_bytes(pg, source.payload);
  return source;
}

std::string state_fingerprint(Model& model, torch::optim::Optimizer& optimizer,
                              const TrainingState& state) {
  Digest d;
  for (const auto& item : model.named_parameters()) {
    d.add(item.key());
    d.add(item.value());
  }
  for (const auto& item : model.named_buffers()) {
    d.add(item.key());
    d.add(item.value());
  }
  auto& states = optimizer.state();
  for (const auto& group : optimizer.param_groups()) {
    for (const at::Tensor& p : group.params()) {
      const auto it = states.find(p.unsafeGetTensorImpl());
      d.add_value(it != states.end());
      if (it != states.end()) add_param_state(d, *it->second);
    }
  }
  d.add_value(state.epoch);
  d.add_value(state.iter);
  d.add_value(state.loss_scale);
  d.add_value(state.scale_growth_tracker);
  d.add_value(state.seed);
  d.add(state.torch_rng_state);
  for (const std::string& s : state.rank_rng_states) d.add(s);
  return d.hex();
}

void verify_same_state(dist::ProcessGroup* pg, const std::string& fingerprint,
                       const std::string& origin) {
  const std::vector<std::string> all = allgather_bytes(pg, fingerprint);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].rfind("error: ", 0) == 0)
      throw ResumeFailed("resume from " + origin + " failed on rank " + std::to_string(r) + ": " +
                         all[r].substr(7));
  }
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0])
      throw ResumeFailed("resume from " + origin + ": rank " + std::to_string(r) +
                         " loaded a different state than rank 0 (digest " + all[r] + " vs " +
                         all[0] + ")");
  }
}

}  // namespace ddp3d::engine
