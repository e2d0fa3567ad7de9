// An 8-bit RGB picture in row-major order, what the bird's-eye-view renderer draws and the PNG
// codec reads and writes. Plain data, no image library in this header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddp3d::visual {

using Rgb = std::array<std::uint8_t, 3>;

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  // width * height * 3 bytes, rows top to bottom

  RgbImage() = default;
  RgbImage(int w, int h, Rgb fill = {0, 0, 0});
  Rgb at(int col, int row) const;
};

}  // namespace ddp3d::visual
