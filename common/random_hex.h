// Random hex strings for secrets and nonces (the rendezvous token and its nonce).
#pragma once

#include <cstddef>
#include <string>

namespace ddp3d {

// `bytes` bytes from the system's CSPRNG (OpenSSL RAND_bytes) as 2 * bytes lower-case hex
// digits. Throws std::runtime_error naming `what` if there is no randomness to give.
std::string random_hex(std::size_t bytes, const char* what);

// Lower-case hex of `n` bytes.
std::string hex_encode(const unsigned char* data, std::size_t n);

}  // namespace ddp3d
