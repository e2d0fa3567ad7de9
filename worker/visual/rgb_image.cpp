#include "worker/visual/rgb_image.h"

#include <stdexcept>
#include <string>

namespace ddp3d::visual {

RgbImage::RgbImage(int w, int h, Rgb fill) : width(w), height(h) {
  if (w <= 0 || h <= 0) throw std::invalid_argument("RgbImage: size must be positive");
  pixels.resize(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3);
  for (std::size_t i = 0; i < pixels.size(); i += 3) {
    pixels[i] = fill[0];
    pixels[i + 1] = fill[1];
    pixels[i + 2] = fill[2];
  }
}

Rgb RgbImage::at(int col, int row) const {
  if (col < 0 || row < 0 || col >= width || row >= height) {
    throw std::out_of_range("RgbImage: pixel (" + std::to_string(col) + ", " + std::to_string(row) +
                            ") outside " + std::to_string(width) + "x" + std::to_string(height));
  }
  const std::size_t i = (static_cast<std::size_t>(row) * static_cast<std::size_t>(width) +
                         static_cast<std::size_t>(col)) *
                        3;
  return {pixels[i], pixels[i + 1], pixels[i + 2]};
}

}  // namespace ddp3d::visual
