#include "common/random_hex.h"

#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace ddp3d {

std::string hex_encode(const unsigned char* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  return out;
}

std::string random_hex(std::size_t bytes, const char* what) {
  std::vector<unsigned char> buf(bytes);
  if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1) {
    throw std::runtime_error(std::string("no random bytes for ") + what + " (OpenSSL RAND_bytes)");
  }
  return hex_encode(buf.data(), buf.size());
}

}  // namespace ddp3d
