#include "operator/controller/rendezvous_token.h"

#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace ddp3d::op::controller {

std::string random_token() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("no random bytes for a rendezvous token (OpenSSL RAND_bytes)");
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const unsigned char b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

}  // namespace ddp3d::op::controller
