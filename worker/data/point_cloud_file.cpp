#include "worker/data/point_cloud_file.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "common/io/atomic_file.h"
#include "worker/data/text_file.h"

namespace ddp3d::data {
namespace {

constexpr float kMaxCoordinate = 1e5F;  // metres; a lidar sees ~100 m

}  // namespace

at::Tensor read_velodyne(const std::string& path) {
  const std::string bytes = read_file(path, kMaxVelodyneBytes, "velodyne scan");
  constexpr std::size_t kRecord = 4 * sizeof(float);
  if (bytes.size() % kRecord != 0) {
    throw std::runtime_error(path + ": " + std::to_string(bytes.size()) +
                             " bytes is not a whole number of (x, y, z, r) float32 records");
  }
  const auto n = static_cast<std::int64_t>(bytes.size() / kRecord);
  at::Tensor points = at::empty({n, 4}, at::kFloat);
  std::memcpy(points.data_ptr<float>(), bytes.data(), bytes.size());
  // A NaN or a point a million km away would reach voxelization and the loss as garbage.
  const float* p = points.data_ptr<float>();
  for (std::int64_t i = 0; i < n * 4; ++i) {
    const bool coordinate = i % 4 < 3;
    if (std::isfinite(p[i]) && (!coordinate || std::abs(p[i]) <= kMaxCoordinate)) continue;
    static constexpr const char* kField[] = {"x", "y", "z", "reflectance"};
    throw std::runtime_error(
        path + ": point " + std::to_string(i / 4) + " (byte " + std::to_string(i * 4) +
        "): " + kField[i % 4] + " = " + std::to_string(p[i]) +
        (coordinate ? " is not a finite coordinate within 1e5 m" : " is not finite"));
  }
  return points;
}

void write_velodyne(const std::string& path, const at::Tensor& points) {
  if (points.dim() != 2 || points.size(1) != 4) {
    throw std::invalid_argument(path + ": points must be [N, 4]");
  }
  const at::Tensor p = points.to(at::kFloat).contiguous();
  io::write_file_atomically(path, std::string(reinterpret_cast<const char*>(p.data_ptr<float>()),
                                              static_cast<std::size_t>(p.numel()) * sizeof(float)));
}

}  // namespace ddp3d::data
