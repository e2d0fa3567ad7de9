// Writes a small TensorBoard event file for tests/dist/engine/tensorboard_test.py, which reads
// it with TensorBoard's own reader: a 40x30 PNG under "sample/bev" and the scalar
// "sample/value" = 0.25, both at step 7. Usage: tensorboard_event_sample LOG_DIR; prints the
// PNG's path (the bytes written), the image's tag and the step.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "worker/visual/png_codec.h"
#include "worker/visual/tensorboard_event_writer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tensorboard_event_sample LOG_DIR\n");
    return 2;
  }
  try {
    using ddp3d::visual::RgbImage;
    RgbImage image(40, 30, {20, 40, 60});
    for (std::size_t i = 0; i < image.pixels.size(); i += 7) image.pixels[i] = 255;
    const std::string png = ddp3d::visual::encode_png(image);
    const std::filesystem::path dir = argv[1];
    ddp3d::visual::TensorboardEventWriter writer(
        dir, [](const std::string& w) { std::fprintf(stderr, "%s\n", w.c_str()); });
    writer.add_image("sample/bev", 7, png);
    writer.add_scalars({{"sample/value", 0.25}}, 7);
    const std::filesystem::path png_path = dir / "sample.png";
    std::ofstream(png_path, std::ios::binary) << png;
    std::printf("%s sample/bev 7\n", png_path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
