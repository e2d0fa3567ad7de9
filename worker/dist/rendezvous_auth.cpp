#include "worker/dist/rendezvous_auth.h"

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "worker/dist/rendezvous_proof.h"

namespace ddp3d::dist {
namespace {

constexpr const char* kNonceKey = "ddp3d/auth/nonce";
constexpr const char* kVerdictKey = "ddp3d/auth/verdict";
constexpr const char* kVerdictSeenKey = "ddp3d/auth/verdict_seen";
constexpr const char* kNoToken = "-";
constexpr const char* kOpen = "open";
constexpr const char* kOk = "ok ";
constexpr const char* kFail = "fail ";

std::string proof_key(int rank) {
  return "ddp3d/auth/proof/" + std::to_string(rank);
}

std::vector<std::uint8_t> bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

std::string text(const std::vector<std::uint8_t>& b) {
  return {b.begin(), b.end()};
}

// Waits for `key` with our own message: c10d's names neither the key's purpose nor the rank.
std::string get(c10d::Store& store, const std::string& key, std::chrono::milliseconds timeout,
                const std::string& what) {
  try {
    store.wait({key}, timeout);
    return text(store.get(key));
  } catch (const std::exception& e) {
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    const std::string reason = c10_error ? c10_error->what_without_backtrace() : e.what();
    throw std::runtime_error("rendezvous authentication: " + what + ": " +
                             reason.substr(0, reason.find('\n')));
  }
}

std::string join_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  }
  return out;
}

// Rank 0's verdict over every rank's proof.
std::string judge(c10d::Store& store, const DistEnv& env, const std::string& token,
                  const std::string& nonce, std::chrono::milliseconds timeout) {
  std::vector<int> without_token;
  std::vector<int> wrong_token;
  for (int r = 0; r < env.world_size; ++r) {
    const std::string proof =
        get(store, proof_key(r), timeout, "rank " + std::to_string(r) + " sent no proof");
    if (proof == kNoToken) {
      if (!token.empty()) without_token.push_back(r);
    } else if (token.empty() ||
               !constant_time_equal(proof, join_proof(token, nonce, r, env.world_size))) {
      wrong_token.push_back(r);
    }
  }
  // Built with append: GCC 12 warns falsely (-Warray-bounds) on chains of operator+.
  std::string failures;
  if (token.empty()) {
    if (wrong_token.empty()) return kOpen;
    failures.append("rank 0 has no ").append(kRendezvousTokenVariable).append(" but ");
    failures.append(join_list(wrong_token)).append(" presented one");
  }
  if (!without_token.empty()) {
    failures.append(join_list(without_token)).append(" presented no ");
    failures.append(kRendezvousTokenVariable);
  }
  if (!token.empty() && !wrong_token.empty()) {
    if (!failures.empty()) failures.append("; ");
    failures.append(join_list(wrong_token)).append(" presented a token other than rank 0's");
  }
  if (!failures.empty()) return kFail + failures;
  return kOk + host_proof(token, nonce, env.world_size);
}

// Rank 0 hosts the store: after a failing verdict it waits (boundedly) until the other ranks
// have read it, so that they fail with the verdict and not with a closed connection.
void wait_until_verdict_seen(c10d::Store& store, const DistEnv& env,
                             std::chrono::milliseconds timeout) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::min(timeout, std::chrono::milliseconds(10000));
  while (store.add(kVerdictSeenKey, 0) < env.world_size - 1 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::string authenticate_rendezvous(c10d::Store& store, const DistEnv& env,
                                    const std::string& token, std::chrono::milliseconds timeout) {
  if (env.rank == 0) store.set(kNonceKey, bytes(random_nonce()));
  const std::string nonce = get(store, kNonceKey, timeout, "rank 0 published no nonce");
  store.set(proof_key(env.rank),
            bytes(token.empty() ? kNoToken : join_proof(token, nonce, env.rank, env.world_size)));
  if (env.rank == 0) store.set(kVerdictKey, bytes(judge(store, env, token, nonce, timeout)));
  const std::string verdict = get(store, kVerdictKey, timeout, "rank 0 gave no verdict");

  if (verdict.rfind(kFail, 0) == 0) {
    if (env.rank == 0) {
      wait_until_verdict_seen(store, env, timeout);
    } else {
      store.add(kVerdictSeenKey, 1);
    }
    throw std::runtime_error("rendezvous authentication failed: " +
                             verdict.substr(std::string(kFail).size()));
  }
  if (verdict == kOpen) {
    if (!token.empty()) {
      throw std::runtime_error(
          "rendezvous authentication failed: this rank has a token but the rendezvous host "
          "(rank 0) asked for none");
    }
    return "";
  }
  if (verdict.rfind(kOk, 0) != 0 || token.empty() ||
      !constant_time_equal(verdict.substr(std::string(kOk).size()),
                           host_proof(token, nonce, env.world_size))) {
    throw std::runtime_error(
        "rendezvous authentication failed: the rendezvous host did not prove it holds this "
        "rank's " +
        std::string(kRendezvousTokenVariable));
  }
  return authenticated_key_prefix(token, nonce);
}

}  // namespace ddp3d::dist
