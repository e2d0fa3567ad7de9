// PNG encoding and decoding of RgbImage through libpng (8-bit RGB, no interlace).
#pragma once

#include <string>
#include <string_view>

#include "worker/visual/rgb_image.h"

namespace ddp3d::visual {

// The PNG file's bytes. Throws std::runtime_error if libpng refuses the image.
std::string encode_png(const RgbImage& image);
// Any PNG libpng reads, converted to 8-bit RGB. Throws std::runtime_error naming what is wrong.
RgbImage decode_png(std::string_view bytes);

}  // namespace ddp3d::visual
