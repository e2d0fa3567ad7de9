#include "worker/visual/png_codec.h"

#include <png.h>

#include <stdexcept>

namespace ddp3d::visual {

namespace {

// libpng reports errors through longjmp; its simplified API (png_image) does that internally
// and returns a flag with a message, so no C++ object lives across a longjmp here.
[[noreturn]] void fail(const png_image& image, const char* what) {
  throw std::runtime_error(std::string("PNG ") + what + ": " + image.message);
}

}  // namespace

std::string encode_png(const RgbImage& rgb) {
  if (rgb.width <= 0 || rgb.height <= 0 ||
      rgb.pixels.size() != static_cast<std::size_t>(rgb.width) * rgb.height * 3) {
    throw std::runtime_error("PNG encode: the image's size does not match its pixels");
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(rgb.width);
  image.height = static_cast<png_uint_32>(rgb.height);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_get_memory_size(image, size, 0, rgb.pixels.data(), 0, nullptr)) {
    fail(image, "encode");
  }
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, rgb.pixels.data(), 0, nullptr)) {
    fail(image, "encode");
  }
  out.resize(size);
  return out;
}

RgbImage decode_png(std::string_view bytes) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    fail(image, "decode");
  }
  // A header may claim any size: refuse what this program would never write (64 Mpixel).
  if (static_cast<std::uint64_t>(image.width) * image.height > (std::uint64_t{1} << 26)) {
    png_image_free(&image);
    throw std::runtime_error("PNG decode: " + std::to_string(image.width) + "x" +
                             std::to_string(image.height) + " is larger than 64 Mpixel");
  }
  image.format = PNG_FORMAT_RGB;
  RgbImage out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr)) {
    fail(image, "decode");
  }
  return out;
}

}  // namespace ddp3d::visual
