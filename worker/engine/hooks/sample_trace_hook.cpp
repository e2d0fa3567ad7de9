#include "worker/engine/hooks/sample_trace_hook.h"

#include <stdexcept>
#include <string>

namespace ddp3d::engine {

SampleTraceHook::SampleTraceHook(const std::filesystem::path& dir, int rank)
    : path_(dir / ("samples_rank" + std::to_string(rank) + ".jsonl")) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  out_.open(path_, std::ios::app);
  if (!out_) throw std::runtime_error("DDP3D_SAMPLE_TRACE: cannot write " + path_.string());
}

void SampleTraceHook::after_train_iter(LoopContext& loop, TrainIter& iter) {
  const LoopProgress& p = loop.progress();
  const RunContext& ctx = loop.run_context();
  std::string line = "{\"epoch\": " + std::to_string(p.epoch + 1) +
                     ", \"iter\": " + std::to_string(p.global_iter + 1) +
                     ", \"world_size\": " + std::to_string(ctx.world_size) +
                     ", \"rank\": " + std::to_string(ctx.rank) +
                     ", \"micro_batches\": " + std::to_string(iter.micro_batches) +
                     ", \"samples\": [";
  for (std::size_t i = 0; i < iter.sample_indices.size(); ++i) {
    if (i > 0) line += ", ";
    line += std::to_string(iter.sample_indices[i]);
  }
  line += "]}\n";
  out_ << line << std::flush;
  if (!out_) throw std::runtime_error("DDP3D_SAMPLE_TRACE: cannot write " + path_.string());
}

}  // namespace ddp3d::engine
