#include "worker/data/point_cloud_file.h"

#include <ATen/ATen.h>

#include <cstring>
#include <stdexcept>

#include "worker/data/text_file.h"

namespace ddp3d::data {

at::Tensor read_velodyne(const std::string& path) {
  const std::string bytes = read_file(path);
  constexpr std::size_t kRecord = 4 * sizeof(float);
  if (bytes.size() % kRecord != 0) {
    throw std::runtime_error(path + ": " + std::to_string(bytes.size()) +
                             " bytes is not a whole number of (x, y, z, r) float32 records");
  }
  const auto n = static_cast<std::int64_t>(bytes.size() / kRecord);
  at::Tensor points = at::empty({n, 4}, at::kFloat);
  std::memcpy(points.data_ptr<float>(), bytes.data(), bytes.size());
  return points;
}

void write_velodyne(const std::string& path, const at::Tensor& points) {
  if (points.dim() != 2 || points.size(1) != 4) {
    throw std::invalid_argument(path + ": points must be [N, 4]");
  }
  const at::Tensor p = points.to(at::kFloat).contiguous();
  write_file_atomically(path, std::string(reinterpret_cast<const char*>(p.data_ptr<float>()),
                                          static_cast<std::size_t>(p.numel()) * sizeof(float)));
}

}  // namespace ddp3d::data
