#include "worker/dist/rendezvous_proof.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace ddp3d::dist {
namespace {

std::string hex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * n, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

}  // namespace

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
           &length) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  }
  return hex(digest.data(), length);
}

// Each message starts with its purpose, so no proof can be replayed as another kind.
std::string join_proof(std::string_view token, std::string_view nonce, int rank, int world_size) {
  return hmac_sha256_hex(token, "ddp3d-rendezvous-join\n" + std::string(nonce) + "\n" +
                                    std::to_string(rank) + "/" + std::to_string(world_size));
}

std::string host_proof(std::string_view token, std::string_view nonce, int world_size) {
  return hmac_sha256_hex(
      token, "ddp3d-rendezvous-host\n" + std::string(nonce) + "\n" + std::to_string(world_size));
}

std::string authenticated_key_prefix(std::string_view token, std::string_view nonce) {
  return hmac_sha256_hex(token, "ddp3d-rendezvous-keys\n" + std::string(nonce)).substr(0, 32) + "/";
}

std::string random_nonce() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    throw std::runtime_error("no random bytes for the rendezvous nonce (OpenSSL RAND_bytes)");
  }
  return hex(bytes.data(), bytes.size());
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace ddp3d::dist
