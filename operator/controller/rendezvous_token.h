// A fresh rendezvous token for one attempt's Secret (docs/security.md, "Network").
#pragma once

#include <string>

namespace ddp3d::op::controller {

// 64 hex digits from the system's CSPRNG (OpenSSL RAND_bytes). Throws std::runtime_error if
// it has no randomness to give.
std::string random_token();

}  // namespace ddp3d::op::controller
