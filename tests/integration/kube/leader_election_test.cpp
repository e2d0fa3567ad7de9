// Two candidates on one Lease of a real kube-apiserver: exactly one leads; the other takes over
// when the leader releases the lease, and when it vanishes without releasing.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "control_plane.h"
#include "operator/kube/leader_elector.h"
#include "operator/kube/lease.h"
#include "test_util.h"

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;
using testing::ControlPlane;
using testing::eventually;

struct Candidate {
  Candidate(Client& client, const std::string& ns, const std::string& id, bool release) {
    LeaderElectionConfig c;
    c.lease_namespace = ns;
    c.lease_name = "ddp3d-operator";
    c.identity = id;
    c.lease_duration = 2s;
    c.renew_deadline = 1500ms;
    c.retry_period = 250ms;
    c.release_on_stop = release;
    c.on_started_leading = [this] { ++started; };
    c.on_stopped_leading = [this] { ++stopped; };
    elector = std::make_unique<LeaderElector>(client, c);
  }
  void run() {
    thread = std::jthread([this](std::stop_token stop) { elector->run(stop); });
  }
  void stop() {
    thread.request_stop();
    thread.join();
  }
  std::unique_ptr<LeaderElector> elector;
  std::atomic<int> started{0}, stopped{0};
  std::jthread thread;
};

std::string holder(Client& client, const std::string& ns) {
  auto lease = client.find(resources::leases(), ns, "ddp3d-operator");
  return lease ? lease_record_from(*lease).holder_identity : std::string();
}

void exactly_one_leads_then_takeover(bool release) {
  Client client(ControlPlane::get().config());
  const std::string ns = testing::unique_namespace(release ? "le-release" : "le-crash");
  testing::create_namespace(client, ns);
  Candidate a(client, ns, "candidate-a", release), b(client, ns, "candidate-b", release);
  a.run();
  b.run();
  ASSERT_TRUE(eventually([&] { return a.elector->is_leader() || b.elector->is_leader(); }, 10s));
  // Watch them for a few lease periods: never both, and the leader stays put.
  Candidate& leader = a.elector->is_leader() ? a : b;
  Candidate& other = &leader == &a ? b : a;
  for (int i = 0; i < 40; ++i) {
    EXPECT_FALSE(a.elector->is_leader() && b.elector->is_leader());
    EXPECT_TRUE(leader.elector->is_leader());
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(holder(client, ns), leader.elector->identity());
  EXPECT_EQ(other.elector->observed_leader(), leader.elector->identity());
  EXPECT_EQ(leader.started.load(), 1);
  EXPECT_EQ(other.started.load(), 0);

  const auto t0 = std::chrono::steady_clock::now();
  leader.stop();  // release=false plays a crashed leader: the lease simply stops being renewed
  EXPECT_EQ(leader.stopped.load(), 1);
  EXPECT_FALSE(leader.elector->is_leader());
  ASSERT_TRUE(eventually([&] { return other.elector->is_leader(); }, 10s));
  const auto takeover = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(holder(client, ns), other.elector->identity());
  EXPECT_EQ(other.started.load(), 1);
  if (release) {
    EXPECT_LT(takeover, 1500ms) << "a released lease is taken at the next retry";
  } else {
    // The leader renewed at most a retry period before it stopped, and the other counts the
    // lease's age from its own last look at it, as client-go does: the lease expires between
    // lease_duration - retry_period and lease_duration + retry_period after the stop.
    EXPECT_GE(takeover, 1750ms) << "an unreleased lease must first expire";
  }
  auto lease = client.get(resources::leases(), ns, "ddp3d-operator");
  EXPECT_EQ(lease_record_from(lease).lease_transitions, 1);
  other.stop();
}

TEST(LeaderElection, ExactlyOneLeadsAndTheOtherTakesOverAfterRelease) {
  exactly_one_leads_then_takeover(true);
}

TEST(LeaderElection, TheOtherTakesOverAfterTheLeaseExpires) {
  exactly_one_leads_then_takeover(false);
}

}  // namespace
}  // namespace ddp3d::kube
