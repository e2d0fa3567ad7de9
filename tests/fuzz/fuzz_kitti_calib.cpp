// libFuzzer: a KITTI calib file (P0-P3, R0_rect, Tr_velo_to_cam, Tr_imu_to_velo).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "worker/data/kitti_calib.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)ddp3d::data::parse_kitti_calib(std::string(reinterpret_cast<const char*>(data), size),
                                         "<fuzz>/000000.txt");
  } catch (const std::exception&) {
  }
  return 0;
}
