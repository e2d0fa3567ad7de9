#include "worker/visual/png_codec.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace ddp3d::visual {
namespace {

TEST(PngCodec, RoundTripKeepsEveryPixel) {
  RgbImage image(7, 5, {1, 2, 3});
  for (int i = 0; i < 7 * 5 * 3; ++i)
    image.pixels[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 7);
  const std::string png = encode_png(image);
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  const RgbImage back = decode_png(png);
  EXPECT_EQ(back.width, 7);
  EXPECT_EQ(back.height, 5);
  EXPECT_EQ(back.pixels, image.pixels);
}

TEST(PngCodec, GarbageTruncationAndLiesAreErrorsNotCrashes) {
  EXPECT_THROW(decode_png(""), std::runtime_error);
  EXPECT_THROW(decode_png("not a png at all"), std::runtime_error);
  const std::string png = encode_png(RgbImage(16, 16, {9, 9, 9}));
  EXPECT_THROW(decode_png(png.substr(0, png.size() / 2)), std::runtime_error);
  // A header claiming 100000 x 100000 pixels: refused before any allocation of that size.
  std::string huge = png;
  const char dims[8] = {0, 1, static_cast<char>(0x86), static_cast<char>(0xa0),
                        0, 1, static_cast<char>(0x86), static_cast<char>(0xa0)};
  huge.replace(16, 8, dims, 8);  // IHDR width and height (the CRC is now wrong too)
  EXPECT_THROW(decode_png(huge), std::runtime_error);
}

TEST(PngCodec, AnImageWhosePixelsDoNotMatchItsSizeIsRefused) {
  RgbImage image(4, 4);
  image.pixels.resize(5);
  EXPECT_THROW(encode_png(image), std::runtime_error);
}

}  // namespace
}  // namespace ddp3d::visual
