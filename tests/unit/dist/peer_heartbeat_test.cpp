// Peer heartbeats between "ranks" that are objects of one process over an in-process store:
// a rank that stops (destroyed without leaving) or a store that stops answering is reported
// within the timeout; ranks that leave in order are not.
#include "worker/dist/peer_heartbeat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

namespace ddp3d::dist {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

HeartbeatOptions fast() {
  HeartbeatOptions o;
  o.interval = milliseconds(50);
  o.timeout = milliseconds(600);
  return o;
}

std::string hostname() {
  std::array<char, 256> name{};
  ::gethostname(name.data(), name.size() - 1);
  return name.data();
}

// The first on_lost message, with when it came.
struct LostReport {
  std::promise<std::pair<std::string, Clock::time_point>> promise;
  std::once_flag once;
  PeerHeartbeat::OnLost callback() {
    return [this](const std::string& m) {
      std::call_once(once, [&] { promise.set_value({m, Clock::now()}); });
    };
  }
};

// A store whose requests block while frozen, as they do when rank 0 (its host) is stopped.
class FreezableStore : public c10d::Store {
 public:
  void freeze() {
    std::lock_guard lock(mutex_);
    frozen_ = true;
  }
  void thaw() {
    std::lock_guard lock(mutex_);
    frozen_ = false;
    thawed_.notify_all();
  }
  c10::intrusive_ptr<c10d::Store> clone() override {
    return c10::intrusive_ptr<c10d::Store>::reclaim_copy(this);
  }
  void set(const std::string& k, const std::vector<uint8_t>& v) override {
    gate();
    inner_->set(k, v);
  }
  std::vector<uint8_t> compareSet(const std::string& k, const std::vector<uint8_t>& e,
                                  const std::vector<uint8_t>& d) override {
    gate();
    return inner_->compareSet(k, e, d);
  }
  std::vector<uint8_t> get(const std::string& k) override {
    gate();
    return inner_->get(k);
  }
  int64_t add(const std::string& k, int64_t v) override {
    gate();
    return inner_->add(k, v);
  }
  bool deleteKey(const std::string& k) override {
    gate();
    return inner_->deleteKey(k);
  }
  bool check(const std::vector<std::string>& keys) override {
    gate();
    return inner_->check(keys);
  }
  int64_t getNumKeys() override {
    gate();
    return inner_->getNumKeys();
  }
  void wait(const std::vector<std::string>& keys) override {
    gate();
    inner_->wait(keys);
  }
  void wait(const std::vector<std::string>& keys, const milliseconds& timeout) override {
    gate();
    inner_->wait(keys, timeout);
  }

 private:
  void gate() {
    std::unique_lock lock(mutex_);
    thawed_.wait(lock, [&] { return !frozen_; });
  }
  c10::intrusive_ptr<c10d::HashStore> inner_ = c10::make_intrusive<c10d::HashStore>();
  std::mutex mutex_;
  std::condition_variable thawed_;
  bool frozen_ = false;
};

TEST(PeerHeartbeat, ARankThatStopsBeatingIsReportedByRankAndHostWithinTheTimeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  LostReport report;
  auto future = report.promise.get_future();
  auto rank0 =
      std::make_unique<PeerHeartbeat>(store, 0, 2, fast(), "127.0.0.1:1", report.callback());
  auto rank1 =
      std::make_unique<PeerHeartbeat>(store, 1, 2, fast(), "127.0.0.1:1", report.callback());
  // Healthy for several timeouts: nobody is reported.
  EXPECT_EQ(future.wait_for(milliseconds(2000)), std::future_status::timeout);
  const auto stopped = Clock::now();
  rank1.reset();  // stops beating without leaving, as a crashed or frozen rank would
  ASSERT_EQ(future.wait_for(milliseconds(5000)), std::future_status::ready);
  const auto [message, when] = future.get();
  const double after = std::chrono::duration<double>(when - stopped).count();
  EXPECT_GT(after, 0.6 - 0.05 - 0.001) << message;  // the last beat was at most one interval old
  EXPECT_LT(after, 0.6 + 0.5) << message;
  EXPECT_NE(message.find("rank 1 (host " + hostname() + ", pid "), std::string::npos) << message;
  EXPECT_NE(message.find("has not heartbeated for"), std::string::npos) << message;
}

TEST(PeerHeartbeat, APeerThatNeverStartsIsTheOneReported) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  LostReport report;
  auto future = report.promise.get_future();
  PeerHeartbeat rank0(store, 0, 3, fast(), "h:1", report.callback());
  PeerHeartbeat rank1(store, 1, 3, fast(), "h:1", [](const std::string&) {});
  ASSERT_EQ(future.wait_for(milliseconds(5000)), std::future_status::ready);
  const std::string message = future.get().first;
  EXPECT_NE(message.find("rank 2 (host unknown) has not heartbeated"), std::string::npos)
      << message;
}

TEST(PeerHeartbeat, AStoreThatStopsAnsweringIsRankZeroLost) {
  auto store = c10::make_intrusive<FreezableStore>();
  LostReport report;
  auto future = report.promise.get_future();
  {
    PeerHeartbeat rank0(store, 0, 2, fast(), "10.1.2.3:29500", [](const std::string&) {});
    PeerHeartbeat rank1(store, 1, 2, fast(), "10.1.2.3:29500", report.callback());
    EXPECT_EQ(future.wait_for(milliseconds(1500)), std::future_status::timeout);
    store->freeze();
    ASSERT_EQ(future.wait_for(milliseconds(5000)), std::future_status::ready);
    store->thaw();  // lets the beaters finish their requests and stop
  }
  const std::string message = future.get().first;
  EXPECT_NE(
      message.find("the rendezvous store at 10.1.2.3:29500, hosted by rank 0 (host " + hostname()),
      std::string::npos)
      << message;
}

TEST(PeerHeartbeat, RanksThatLeaveInOrderAreNotLost) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  LostReport report;
  auto future = report.promise.get_future();
  auto rank0 = std::make_unique<PeerHeartbeat>(store, 0, 3, fast(), "h:1", report.callback());
  auto rank1 = std::make_unique<PeerHeartbeat>(store, 1, 3, fast(), "h:1", report.callback());
  auto rank2 = std::make_unique<PeerHeartbeat>(store, 2, 3, fast(), "h:1", report.callback());
  EXPECT_EQ(future.wait_for(milliseconds(300)), std::future_status::timeout);
  rank2->leave();
  rank2.reset();
  rank1->leave();
  rank1.reset();
  // Rank 0 waits for its peers' "left" (already published), far less than a timeout.
  const auto start = Clock::now();
  rank0->leave();
  EXPECT_LT(Clock::now() - start, milliseconds(500));
  EXPECT_EQ(future.wait_for(milliseconds(1500)), std::future_status::timeout);
  rank0.reset();
}

}  // namespace
}  // namespace ddp3d::dist
