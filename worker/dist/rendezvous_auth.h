// The authenticated rendezvous. c10d's TCPStore accepts any client that reaches
// MASTER_ADDR:MASTER_PORT, so when the job has a token (DDP3D_RENDEZVOUS_TOKEN, a per-attempt
// Secret under the operator) the ranks prove they hold it before they build a process group:
//
//   1. rank 0 publishes a fresh nonce;
//   2. every rank publishes join_proof(token, nonce, rank, world size) (or "-" without a token);
//   3. rank 0 checks them all and publishes one verdict, with host_proof when all is well, so
//      the ranks also know the host holds the token;
//   4. the group's later keys (Gloo addresses, heartbeats, shared memory) live under
//      authenticated_key_prefix(token, nonce), which nobody without the token can name.
//
// Every rank ends with the same outcome: the prefix, or the same error naming the ranks that
// failed. What it does not stop: a client that reaches the store can still delay or break the
// rendezvous (deny service); a NetworkPolicy (docs/security.md) keeps such clients out.
#pragma once

#include <chrono>
#include <string>

#include "worker/dist/dist_env.h"

namespace c10d {
class Store;
}  // namespace c10d

namespace ddp3d::dist {

// The environment variable that carries the token (empty or unset: no authentication).
inline constexpr const char* kRendezvousTokenVariable = "DDP3D_RENDEZVOUS_TOKEN";

// Runs the handshake above on every rank; `token` is this rank's (may be empty). Returns the
// key prefix for the group's later keys, "" when no rank has a token. Throws
// std::runtime_error with the verdict when a rank's proof is missing or wrong, or when a rank
// did not answer within `timeout`.
std::string authenticate_rendezvous(c10d::Store& store, const DistEnv& env,
                                    const std::string& token, std::chrono::milliseconds timeout);

}  // namespace ddp3d::dist
