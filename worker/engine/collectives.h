// The few collectives the runner needs beyond DDP, over a ddp3d ProcessGroup. Every function
// is the identity / a no-op when `pg` is null (a single process), so the runner has one code
// path for both.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ddp3d::dist {
class ProcessGroup;
}

namespace ddp3d::engine {

// Averages each tensor in place across ranks (one all-reduce per tensor; undefined skipped).
void allreduce_mean_(dist::ProcessGroup* pg, const std::vector<at::Tensor>& tensors);
// Copies rank 0's values into every rank's tensors in place.
void broadcast_(dist::ProcessGroup* pg, const std::vector<at::Tensor>& tensors);
// Element-wise mean of `values` across ranks (for logging).
std::vector<double> allreduce_mean(dist::ProcessGroup* pg, const std::vector<double>& values);
// Rank 0's value on every rank.
std::int64_t broadcast_int(dist::ProcessGroup* pg, std::int64_t value);
// Rank 0's `bytes` on every rank (the others' argument is ignored).
std::string broadcast_bytes(dist::ProcessGroup* pg, const std::string& bytes);
// Every rank's `bytes`, in rank order, on every rank.
std::vector<std::string> allgather_bytes(dist::ProcessGroup* pg, const std::string& bytes);

}  // namespace ddp3d::engine
