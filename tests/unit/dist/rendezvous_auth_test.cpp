// The authenticated rendezvous between "ranks" that are threads of one process over an
// in-process store: ranks with one token agree on a key prefix; a rank with another token, or
// none, fails every rank with its rank named; a host that cannot prove the token is refused.
#include "worker/dist/rendezvous_auth.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

#include "worker/dist/rendezvous_proof.h"

namespace ddp3d::dist {
namespace {

using std::chrono::milliseconds;

struct Outcome {
  std::string prefix;
  std::string error;  // empty when it succeeded
};

// Runs one rank per token (rank r gets tokens[r]) on one store; returns each rank's outcome.
std::vector<Outcome> rendezvous(const std::vector<std::string>& tokens,
                                milliseconds timeout = milliseconds(5000)) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  const int world = static_cast<int>(tokens.size());
  std::vector<std::future<Outcome>> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.push_back(std::async(std::launch::async, [&, r] {
      DistEnv env;
      env.rank = r;
      env.world_size = world;
      try {
        return Outcome{authenticate_rendezvous(*store, env, tokens[r], timeout), ""};
      } catch (const std::exception& e) {
        return Outcome{"", e.what()};
      }
    }));
  }
  std::vector<Outcome> out;
  for (auto& f : ranks) out.push_back(f.get());
  return out;
}

TEST(RendezvousProof, HmacSha256MatchesRfc4231TestCase2) {
  EXPECT_EQ(hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(RendezvousProof, ProofsBindTokenNonceRankAndWorldSize) {
  const std::string base = join_proof("token", "nonce", 1, 4);
  EXPECT_EQ(base, join_proof("token", "nonce", 1, 4));
  EXPECT_NE(base, join_proof("token2", "nonce", 1, 4));
  EXPECT_NE(base, join_proof("token", "nonce2", 1, 4));
  EXPECT_NE(base, join_proof("token", "nonce", 2, 4));
  EXPECT_NE(base, join_proof("token", "nonce", 1, 5));
  // The three kinds of message never coincide.
  EXPECT_NE(host_proof("token", "nonce", 4), join_proof("token", "nonce", 0, 4));
  EXPECT_EQ(authenticated_key_prefix("token", "nonce").size(), 33U);
  EXPECT_NE(authenticated_key_prefix("token", "nonce"), authenticated_key_prefix("t", "nonce"));
}

TEST(RendezvousProof, NoncesAreFreshAndConstantTimeEqualCompares) {
  EXPECT_NE(random_nonce(), random_nonce());
  EXPECT_EQ(random_nonce().size(), 32U);
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
}

TEST(RendezvousAuth, RanksWithTheSameTokenShareAPrefix) {
  const auto out = rendezvous({"s3cret", "s3cret", "s3cret"});
  for (const auto& o : out) {
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.prefix.size(), 33U);
    EXPECT_EQ(o.prefix, out[0].prefix);
  }
  // A new rendezvous (new nonce) with the same token gets another prefix.
  EXPECT_NE(rendezvous({"s3cret", "s3cret"})[0].prefix, out[0].prefix);
}

TEST(RendezvousAuth, NoTokenAnywhereIsAnOpenRendezvous) {
  for (const auto& o : rendezvous({"", "", ""})) {
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.prefix, "");
  }
}

TEST(RendezvousAuth, AnotherTokenFailsEveryRankNamingTheRank) {
  for (const auto& o : rendezvous({"s3cret", "guess", "s3cret"})) {
    EXPECT_EQ(o.error,
              "rendezvous authentication failed: rank 1 presented a token other than rank 0's");
  }
}

TEST(RendezvousAuth, MissingTokensAreNamedApartFromWrongOnes) {
  for (const auto& o : rendezvous({"s3cret", "", "x", ""})) {
    EXPECT_EQ(o.error,
              "rendezvous authentication failed: ranks 1, 3 presented no DDP3D_RENDEZVOUS_TOKEN; "
              "rank 2 presented a token other than rank 0's");
  }
}

TEST(RendezvousAuth, AHostWithoutTokenRefusesRanksThatHaveOne) {
  for (const auto& o : rendezvous({"", "s3cret"})) {
    EXPECT_EQ(o.error,
              "rendezvous authentication failed: rank 0 has no DDP3D_RENDEZVOUS_TOKEN but rank 1 "
              "presented one");
  }
}

// A process that reached the store first and plays rank 0 without the token: it can publish a
// nonce and an "ok" verdict, but not the host proof, so the real rank refuses it.
TEST(RendezvousAuth, AForgedHostIsRefused) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  const std::string nonce = "0123456789abcdef0123456789abcdef";
  store->set("ddp3d/auth/nonce", std::vector<std::uint8_t>(nonce.begin(), nonce.end()));
  const std::string forged = "ok " + host_proof("guess", nonce, 2);
  store->set("ddp3d/auth/verdict", std::vector<std::uint8_t>(forged.begin(), forged.end()));
  DistEnv env;
  env.rank = 1;
  env.world_size = 2;
  try {
    authenticate_rendezvous(*store, env, "s3cret", milliseconds(2000));
    FAIL() << "a forged host was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "rendezvous authentication failed: the rendezvous host did not prove it holds this "
              "rank's DDP3D_RENDEZVOUS_TOKEN");
  }
}

TEST(RendezvousAuth, ARankThatNeverAnswersTimesOutNamingIt) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  DistEnv env;
  env.rank = 0;
  env.world_size = 2;  // rank 1 never comes
  try {
    authenticate_rendezvous(*store, env, "s3cret", milliseconds(300));
    FAIL() << "rank 0 did not time out";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("rendezvous authentication: rank 1 sent no proof"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ddp3d::dist
