// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord framing, and
// TFRecord's masked form of it. No Debian C/C++ package provides it, so a table-driven one.
#pragma once

#include <cstdint>
#include <string_view>

namespace ddp3d::visual {

std::uint32_t crc32c(std::string_view bytes);
// TFRecord stores ((crc >> 15) | (crc << 17)) + 0xa282ead8: a CRC of data that itself
// contains CRCs is then not trivially zero.
std::uint32_t masked_crc32c(std::string_view bytes);

}  // namespace ddp3d::visual
