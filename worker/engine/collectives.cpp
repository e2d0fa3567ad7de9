#include "worker/engine/collectives.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <torch/csrc/distributed/c10d/Backend.hpp>

#include "worker/dist/process_group.h"

namespace ddp3d::engine {
namespace {

at::Device comm_device(dist::ProcessGroup& pg) {
  // NCCL moves CUDA tensors only; Gloo here works on CPU tensors.
  return pg.kind() == dist::BackendKind::kNccl ? at::Device(at::kCUDA) : at::Device(at::kCPU);
}

void allreduce_sum_(dist::ProcessGroup& pg, at::Tensor& t) {
  std::vector<at::Tensor> one{t};
  pg.backend().allreduce(one)->wait();
}

}  // namespace

void allreduce_mean_(dist::ProcessGroup* pg, const std::vector<at::Tensor>& tensors) {
  if (pg == nullptr || pg->size() == 1) return;
  for (const at::Tensor& t : tensors) {
    if (!t.defined()) continue;
    at::Tensor buf = t;
    allreduce_sum_(*pg, buf);
    buf.div_(pg->size());
  }
}

void broadcast_(dist::ProcessGroup* pg, const std::vector<at::Tensor>& tensors) {
  if (pg == nullptr || pg->size() == 1) return;
  for (const at::Tensor& t : tensors) {
    if (!t.defined()) continue;
    std::vector<at::Tensor> one{t};
    c10d::BroadcastOptions opts;
    opts.rootRank = 0;
    pg->backend().broadcast(one, opts)->wait();
  }
}

std::vector<double> allreduce_mean(dist::ProcessGroup* pg, const std::vector<double>& values) {
  if (pg == nullptr || pg->size() == 1 || values.empty()) return values;
  at::Tensor t = at::tensor(values, at::kDouble).to(comm_device(*pg));
  allreduce_sum_(*pg, t);
  t = t.div(pg->size()).to(at::kCPU);
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

std::int64_t broadcast_int(dist::ProcessGroup* pg, std::int64_t value) {
  if (pg == nullptr || pg->size() == 1) return value;
  at::Tensor t = at::full({1}, value, at::kLong).to(comm_device(*pg));
  broadcast_(pg, {t});
  return t.to(at::kCPU).item<std::int64_t>();
}

std::vector<std::string> allgather_bytes(dist::ProcessGroup* pg, const std::string& bytes) {
  if (pg == nullptr || pg->size() == 1) return {bytes};
  const int world = pg->size();
  const at::Device dev = comm_device(*pg);
  // Lengths first, then every rank's bytes padded to the longest.
  at::Tensor len = at::full({1}, static_cast<std::int64_t>(bytes.size()), at::kLong).to(dev);
  std::vector<std::vector<at::Tensor>> len_out(1);
  for (int r = 0; r < world; ++r) len_out[0].push_back(at::empty({1}, at::kLong).to(dev));
  std::vector<at::Tensor> len_in{len};
  pg->backend().allgather(len_out, len_in)->wait();
  std::vector<std::int64_t> lengths;
  for (const at::Tensor& l : len_out[0]) lengths.push_back(l.to(at::kCPU).item<std::int64_t>());
  const std::int64_t max_len =
      std::max<std::int64_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  at::Tensor mine = at::zeros({max_len}, at::kByte);
  std::memcpy(mine.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  std::vector<at::Tensor> data_in{mine.to(dev)};
  std::vector<std::vector<at::Tensor>> data_out(1);
  for (int r = 0; r < world; ++r) data_out[0].push_back(at::empty({max_len}, at::kByte).to(dev));
  pg->backend().allgather(data_out, data_in)->wait();
  std::vector<std::string> out;
  for (int r = 0; r < world; ++r) {
    const at::Tensor cpu = data_out[0][r].to(at::kCPU).contiguous();
    out.emplace_back(reinterpret_cast<const char*>(cpu.data_ptr<std::uint8_t>()),
                     static_cast<std::size_t>(lengths[r]));
  }
  return out;
}

std::string broadcast_bytes(dist::ProcessGroup* pg, const std::string& bytes) {
  if (pg == nullptr || pg->size() == 1) return bytes;
  const std::int64_t size = broadcast_int(pg, static_cast<std::int64_t>(bytes.size()));
  if (size == 0) return {};
  at::Tensor buf = at::empty({size}, at::kByte);
  if (pg->rank() == 0) std::memcpy(buf.data_ptr<std::uint8_t>(), bytes.data(), bytes.size());
  buf = buf.to(comm_device(*pg));
  broadcast_(pg, {buf});
  const at::Tensor cpu = buf.to(at::kCPU).contiguous();
  return {reinterpret_cast<const char*>(cpu.data_ptr<std::uint8_t>()),
          static_cast<std::size_t>(size)};
}

}  // namespace ddp3d::engine
