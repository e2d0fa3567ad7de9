// libFuzzer: a KITTI label_2 file (15 or 16 fields per object line).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "worker/data/kitti_label.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)ddp3d::data::parse_kitti_labels(std::string(reinterpret_cast<const char*>(data), size),
                                          "<fuzz>/000000.txt");
  } catch (const std::exception&) {
  }
  return 0;
}
