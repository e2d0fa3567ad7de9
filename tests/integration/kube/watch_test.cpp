// Watch streams, the informer cache and their recovery, against a real kube-apiserver.
#include "operator/kube/watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "control_plane.h"
#include "operator/kube/errors.h"
#include "operator/kube/informer.h"
#include "test_util.h"

namespace ddp3d::kube {
namespace {

using namespace std::chrono_literals;
using testing::config_map;
using testing::ControlPlane;
using testing::data_value;
using testing::eventually;
using web::json::value;

struct Recorded {
  std::mutex mu;
  std::vector<std::pair<EventType, std::string>> events;  // type, name
  void add(const WatchEvent& ev) {
    std::lock_guard l(mu);
    events.emplace_back(ev.type, meta_name(ev.object));
  }
  std::vector<EventType> types_for(const std::string& name) {
    std::lock_guard l(mu);
    std::vector<EventType> out;
    for (const auto& [t, n] : events)
      if (n == name) out.push_back(t);
    return out;
  }
};

TEST(Watch, StreamSeesAddedModifiedDeletedInOrder) {
  Client client(ControlPlane::get().config());
  const std::string ns = testing::unique_namespace("watch");
  testing::create_namespace(client, ns);
  const auto& cms = resources::config_maps();
  const std::string rv = client.list(cms, ns).resource_version;

  Recorded rec;
  std::jthread watcher([&](std::stop_token stop) {
    WatchOptions o;
    o.resource_version = rv;
    o.timeout_seconds = 60;
    client.watch_stream(
        cms, ns, o, [&](const WatchEvent& ev) { rec.add(ev); }, stop);
  });
  client.create(cms, ns, config_map("w", {{"k", "1"}}));
  client.patch(cms, ns, "w", value::parse(R"({"data":{"k":"2"}})"));
  client.remove(cms, ns, "w");
  const std::vector<EventType> want{EventType::kAdded, EventType::kModified, EventType::kDeleted};
  EXPECT_TRUE(eventually([&] { return rec.types_for("w").size() >= 3; }));
  EXPECT_EQ(rec.types_for("w"), want);
  // Cancellation must end a stream that is idle on the server side.
  const auto t0 = std::chrono::steady_clock::now();
  watcher.request_stop();
  watcher.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

// After an apiserver restart its watch cache starts at the current revision, so a
// resourceVersion from before the restart (with writes after it) is too old: 410 Gone.
TEST(Watch, TooOldResourceVersionIsGoneAndTheWatcherRelists) {
  Client client(ControlPlane::get().config());
  const std::string ns = testing::unique_namespace("gone");
  testing::create_namespace(client, ns);
  const auto& cms = resources::config_maps();
  const std::string old_rv = client.list(cms, ns).resource_version;
  for (int i = 0; i < 3; ++i) client.create(cms, ns, config_map("g" + std::to_string(i), {}));
  ControlPlane::get().stop_apiserver();
  ControlPlane::get().start_apiserver();

  WatchOptions o;
  o.resource_version = old_rv;
  o.timeout_seconds = 10;
  std::stop_source never;
  EXPECT_THROW(client.watch_stream(
                   cms, ns, o, [](const WatchEvent&) {}, never.get_token()),
               GoneError);

  Watcher::Options wo;
  wo.watch.resource_version = old_rv;  // resuming from it must fall back to a re-list
  wo.min_timeout_seconds = 30;
  std::atomic<int> lists{0};
  std::string listed_rv;  // the first list's; written before `lists` first goes up
  Recorded rec;
  Watcher w(
      client, cms, ns, wo, [&](const WatchEvent& ev) { rec.add(ev); },
      [&] {
        std::string rv = client.list(cms, ns).resource_version;
        // Counted only once the list has answered: an object created while the list is in
        // flight may be part of the listed state (then it is rightly never an event), which
        // made this test flaky when the count went up before the list was sent.
        if (lists.load() == 0) listed_rv = rv;
        ++lists;
        return rv;
      });
  std::jthread t([&](std::stop_token stop) { w.run(stop); });
  ASSERT_TRUE(eventually([&] { return lists.load() >= 1; }));
  const value after = client.create(cms, ns, config_map("after", {}));
  ASSERT_GT(std::stoull(meta_resource_version(after)), std::stoull(listed_rv))
      << "created after the re-list, so only the watch can deliver it";
  EXPECT_TRUE(eventually([&] { return !rec.types_for("after").empty(); }));
  EXPECT_EQ(rec.types_for("after"), std::vector<EventType>{EventType::kAdded});
  for (const char* listed : {"g0", "g1", "g2"})
    EXPECT_EQ(rec.types_for(listed).size(), 0u)
        << listed << ": objects from the re-list are not replayed as events";
  EXPECT_EQ(w.relists(), 1);
  EXPECT_EQ(lists.load(), 1);
  EXPECT_FALSE(w.resource_version().empty());
}

class InformerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ns = testing::unique_namespace("informer");
    testing::create_namespace(client, ns);
  }
  // The informer's cache holds exactly what the server lists (names and resourceVersions).
  bool converged(const Informer& inf, const std::string& selector = {}) {
    ListOptions lo;
    lo.label_selector = selector;
    std::map<std::string, std::string> server, cached;
    for (const auto& o : client.list(resources::config_maps(), ns, lo).items)
      server[meta_name(o)] = meta_resource_version(o);
    for (const auto& o : inf.cache().list()) cached[meta_name(*o)] = meta_resource_version(*o);
    return server == cached;
  }
  Client client{ControlPlane::get().config()};
  std::string ns;
};

TEST_F(InformerTest, CacheAndHandlersConvergeWithTheServer) {
  const auto& cms = resources::config_maps();
  for (int i = 0; i < 4; ++i)
    client.create(cms, ns, config_map("pre-" + std::to_string(i), {}, {{"owned", "yes"}}));
  client.create(cms, ns, config_map("unlabelled", {}));

  Informer::Options opts;
  opts.label_selector = "owned=yes";
  Informer inf(client, cms, ns, opts);
  std::atomic<int> adds{0}, updates{0}, deletes{0};
  inf.add_handlers({[&](const value&) { ++adds; },
                    [&](const value& o, const value& n) {
                      if (meta_resource_version(o) != meta_resource_version(n)) ++updates;
                    },
                    [&](const value&) { ++deletes; }});
  EXPECT_FALSE(inf.has_synced());
  inf.start();
  ASSERT_TRUE(inf.wait_for_sync(15s));
  EXPECT_EQ(inf.cache().size(), 4u) << "label selector applied";
  EXPECT_EQ(adds.load(), 4);

  client.create(cms, ns, config_map("new", {}, {{"owned", "yes"}}));
  client.patch(cms, ns, "pre-0", value::parse(R"({"data":{"x":"y"}})"));
  client.remove(cms, ns, "pre-1");
  // Relabelling out of the selector looks like a delete to a label-selected watch.
  client.patch(cms, ns, "pre-2", value::parse(R"({"metadata":{"labels":{"owned":"no"}}})"));
  EXPECT_TRUE(eventually([&] { return converged(inf, "owned=yes"); }));
  EXPECT_TRUE(eventually([&] { return adds == 5 && updates == 1 && deletes == 2; }))
      << adds << " " << updates << " " << deletes;
  auto cached = inf.cache().get(ns, "pre-0");
  ASSERT_TRUE(cached);
  EXPECT_EQ(data_value(*cached, "x"), "y");
  EXPECT_FALSE(inf.cache().get(ns, "unlabelled"));
  inf.stop();
}

TEST_F(InformerTest, TransformShapesWhatIsCachedAndWhatHandlersSee) {
  const auto& cms = resources::config_maps();
  client.create(cms, ns, config_map("listed", {{"keep", "1"}, {"drop", "2"}}));
  Informer::Options opts;
  opts.transform = [](const value& obj) {
    value out = obj;
    if (out.at("metadata").has_field("managedFields")) out.at("metadata").erase("managedFields");
    if (out.has_field("data") && out.at("data").has_field("drop")) out.at("data").erase("drop");
    return out;
  };
  Informer inf(client, cms, ns, opts);
  std::atomic<int> seen_untransformed{0}, seen{0};
  auto check = [&](const value& o) {
    ++seen;
    if (o.at("metadata").has_field("managedFields") || o.at("data").has_field("drop"))
      ++seen_untransformed;
  };
  inf.add_handlers({check, [&](const value&, const value& n) { check(n); }, check});
  inf.start();
  ASSERT_TRUE(inf.wait_for_sync(15s));
  client.create(cms, ns, config_map("watched", {{"keep", "1"}, {"drop", "2"}}));
  client.remove(cms, ns, "listed");
  EXPECT_TRUE(eventually([&] { return seen >= 3; }));
  EXPECT_EQ(seen_untransformed.load(), 0) << "list, add and delete all go through the transform";
  auto cached = inf.cache().get(ns, "watched");
  ASSERT_TRUE(cached);
  EXPECT_FALSE(cached->at("metadata").has_field("managedFields"));
  EXPECT_EQ(data_value(*cached, "keep"), "1");
  EXPECT_FALSE(cached->at("data").has_field("drop"));
  inf.stop();
}

TEST_F(InformerTest, ResyncRedeliversCachedObjectsAsUpdates) {
  const auto& cms = resources::config_maps();
  client.create(cms, ns, config_map("steady", {}));
  Informer::Options opts;
  opts.resync_period = 200ms;
  Informer inf(client, cms, ns, opts);
  std::atomic<int> same_version_updates{0};
  inf.add_handlers({{},
                    [&](const value& o, const value& n) {
                      if (meta_resource_version(o) == meta_resource_version(n))
                        ++same_version_updates;
                    },
                    {}});
  const std::size_t threads_before = testing::live_threads();
  inf.start();
  ASSERT_TRUE(inf.wait_for_sync(15s));
  EXPECT_TRUE(eventually([&] { return same_version_updates >= 3; }, 10s));
  EXPECT_GE(testing::live_threads(), threads_before + 2) << "a watch and a resync thread";
  inf.stop();
  const int after_stop = same_version_updates;
  // stop() joined both threads (a joined thread may linger in /proc for a moment), so nothing
  // is left that could deliver another resync.
  EXPECT_TRUE(eventually([&] { return testing::live_threads() <= threads_before; }, 5s))
      << testing::live_threads() << " threads, " << threads_before << " before start()";
  EXPECT_EQ(same_version_updates.load(), after_stop) << "stop() ends the resync loop";
}

TEST_F(InformerTest, SurvivesAnApiserverRestart) {
  const auto& cms = resources::config_maps();
  client.create(cms, ns, config_map("before", {}));
  Informer::Options opts;
  opts.backoff = {.base = 100ms, .max = 1000ms, .factor = 2.0, .jitter = 0.2};
  Informer inf(client, cms, ns, opts);
  std::atomic<int> deletes{0};
  inf.add_handlers({{}, {}, [&](const value&) { ++deletes; }});
  inf.start();
  ASSERT_TRUE(inf.wait_for_sync(15s));

  ControlPlane::get().stop_apiserver();
  // The watch notices (its stream ends, the reconnect is refused) and starts backing off.
  EXPECT_TRUE(eventually([&] { return inf.watch_reconnects() >= 1; }, 15s));
  ControlPlane::get().start_apiserver();

  client.create(cms, ns, config_map("after", {}));
  client.remove(cms, ns, "before");
  EXPECT_TRUE(eventually([&] { return converged(inf); }, 30s));
  EXPECT_TRUE(inf.cache().get(ns, "after"));
  EXPECT_FALSE(inf.cache().get(ns, "before"));
  EXPECT_EQ(deletes.load(), 1);
  inf.stop();
}

}  // namespace
}  // namespace ddp3d::kube
