// KITTI velodyne scans (velodyne/XXXXXX.bin): little-endian float32 records x, y, z,
// reflectance.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

namespace ddp3d::data {

// [N, 4] float32. A size that is not a multiple of 16 bytes is an error naming the file.
at::Tensor read_velodyne(const std::string& path);
void write_velodyne(const std::string& path, const at::Tensor& points);

}  // namespace ddp3d::data
