#include "operator/controller/event_aggregation.h"

#include <gtest/gtest.h>

#include <string>

namespace ddp3d::op::controller {
namespace {

constexpr int64_t kSecond = 1000000000;
constexpr int64_t kT = 1796033609 * kSecond;

EventKey key(const std::string& message = "runPolicy.suspend is true; pods deleted") {
  return {"uid-1", "Normal", "Suspended", message, "ddp3d-operator"};
}

// Records what the aggregator asks for, as the applier does after a successful request.
std::optional<EventRepeat> occur(EventAggregator& a, const EventKey& k, int64_t now,
                                 const std::string& new_name = "pp.1") {
  auto repeat = a.repeat_of(k, now);
  a.recorded(k, repeat ? repeat->name : new_name, repeat ? repeat->count : 1, now);
  return repeat;
}

TEST(EventAggregation, TheFirstOccurrenceCreatesAndRepeatsCount) {
  EventAggregator a;
  EXPECT_FALSE(occur(a, key(), kT));
  const auto second = occur(a, key(), kT + 5 * kSecond);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->name, "pp.1");
  EXPECT_EQ(second->count, 2);
  const auto third = occur(a, key(), kT + 9 * kSecond);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->count, 3);
  EXPECT_EQ(a.size(), 1u);
}

TEST(EventAggregation, NothingIsRememberedUntilRecorded) {
  // A request that failed is not counted: the next occurrence asks for the same count again.
  EventAggregator a;
  occur(a, key(), kT);
  ASSERT_EQ(a.repeat_of(key(), kT + kSecond)->count, 2);
  EXPECT_EQ(a.repeat_of(key(), kT + 2 * kSecond)->count, 2);
}

TEST(EventAggregation, AnOccurrencePastTheWindowCreatesAnew) {
  EventAggregator a(16, 600);
  occur(a, key(), kT);
  // The window runs from the last occurrence, so a steady repeat keeps one Event.
  EXPECT_TRUE(occur(a, key(), kT + 600 * kSecond));
  EXPECT_TRUE(occur(a, key(), kT + 1200 * kSecond));
  EXPECT_FALSE(occur(a, key(), kT + 1801 * kSecond, "pp.2"));
  const auto after = occur(a, key(), kT + 1802 * kSecond);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->name, "pp.2");
  EXPECT_EQ(after->count, 2);
}

TEST(EventAggregation, AnyDifferentFieldIsAnotherEvent) {
  EventAggregator a;
  occur(a, key(), kT);
  EXPECT_FALSE(a.repeat_of(key("another message"), kT + kSecond));
  for (int field = 0; field < 5; ++field) {
    EventKey k = key();
    std::string* f[] = {&k.uid, &k.type, &k.reason, &k.message, &k.component};
    *f[field] += "x";
    EXPECT_FALSE(a.repeat_of(k, kT + kSecond)) << field;
  }
  // Fields are not run together: "ab"+"c" is not "a"+"bc".
  EventKey left = key();
  EventKey right = key();
  left.type = "Normalx";
  left.reason = "Suspended";
  right.type = "Normal";
  right.reason = "xSuspended";
  occur(a, left, kT);
  EXPECT_FALSE(a.repeat_of(right, kT + kSecond));
}

TEST(EventAggregation, AGoneEventIsForgotten) {
  EventAggregator a;
  occur(a, key(), kT);
  a.forget(key());
  EXPECT_FALSE(a.repeat_of(key(), kT + kSecond));
  EXPECT_EQ(a.size(), 0u);
  a.forget(key());  // twice is harmless
}

TEST(EventAggregation, MemoryIsBoundedByTheLeastRecentlyRecorded) {
  EventAggregator a(3);
  for (int i = 0; i < 1000; ++i) occur(a, key("unique " + std::to_string(i)), kT + i);
  EXPECT_EQ(a.size(), 3u);
  EXPECT_FALSE(a.repeat_of(key("unique 996"), kT + 1000));
  EXPECT_TRUE(a.repeat_of(key("unique 999"), kT + 1000));
  // A repeat refreshes its key: "unique 997" outlives "unique 998".
  occur(a, key("unique 997"), kT + 1001);
  occur(a, key("new"), kT + 1002);
  EXPECT_TRUE(a.repeat_of(key("unique 997"), kT + 1003));
  EXPECT_FALSE(a.repeat_of(key("unique 998"), kT + 1003));
  EXPECT_EQ(EventAggregator().size(), 0u);
  EXPECT_EQ(kEventCacheEntries, 4096u);
}

}  // namespace
}  // namespace ddp3d::op::controller
