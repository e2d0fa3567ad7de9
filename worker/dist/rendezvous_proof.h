// The messages of the authenticated rendezvous (rendezvous_auth.h): keyed digests of a
// per-rendezvous nonce under the job's token. Pure functions, so every binding (rank, world
// size, nonce) is tested without a store.
#pragma once

#include <string>
#include <string_view>

namespace ddp3d::dist {

// HMAC-SHA256 of `message` under `key`, as 64 lower-case hex digits.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

// What rank `rank` of `world_size` publishes to prove it holds `token` for this rendezvous.
std::string join_proof(std::string_view token, std::string_view nonce, int rank, int world_size);

// What rank 0 publishes with its verdict, so the other ranks know the host holds the token too.
std::string host_proof(std::string_view token, std::string_view nonce, int world_size);

// The prefix every later store key lives under: unguessable without the token, so a process
// that reaches the store cannot read the Gloo addresses or forge heartbeats.
std::string authenticated_key_prefix(std::string_view token, std::string_view nonce);

// A fresh random nonce (32 hex digits from the system's CSPRNG).
std::string random_nonce();

// Equal strings, compared in time independent of where they differ.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace ddp3d::dist
