#include "worker/dist/rendezvous_proof.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <stdexcept>

#include "common/random_hex.h"

namespace ddp3d::dist {

std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
           &length) == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  }
  return hex_encode(digest.data(), length);
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
  return random_hex(16, "the rendezvous nonce");
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace ddp3d::dist
