#include "operator/kube/object_cache.h"

#include <gtest/gtest.h>

#include <memory>

namespace ddp3d::kube {
namespace {

using web::json::value;

struct Spec {
  std::string ns, name, rv;
  std::map<std::string, std::string> labels;
  std::vector<std::string> owners;
};

ObjectPtr obj(const Spec& s) {
  auto v = value::object();
  v["metadata"]["name"] = value::string(s.name);
  if (!s.ns.empty()) v["metadata"]["namespace"] = value::string(s.ns);
  v["metadata"]["resourceVersion"] = value::string(s.rv);
  for (const auto& [k, l] : s.labels) v["metadata"]["labels"][k] = value::string(l);
  if (!s.owners.empty()) {
    value refs = value::array();
    for (std::size_t i = 0; i < s.owners.size(); ++i) refs[i]["uid"] = value::string(s.owners[i]);
    v["metadata"]["ownerReferences"] = refs;
  }
  return std::make_shared<const value>(std::move(v));
}

ObjectPtr obj(const std::string& ns, const std::string& name, const std::string& rv,
              const std::string& job = "") {
  Spec s{ns, name, rv, {}, {}};
  if (!job.empty()) s.labels["ddp3d.io/job-name"] = job;
  return obj(s);
}

std::string rv(const ObjectPtr& v) {
  return v->at("metadata").at("resourceVersion").as_string();
}

std::vector<std::string> names(const std::vector<ObjectPtr>& objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) out.push_back(o->at("metadata").at("name").as_string());
  return out;
}

using Names = std::vector<std::string>;

TEST(ObjectCache, UpsertReturnsThePreviousVersion) {
  ObjectCache c;
  EXPECT_FALSE(c.upsert(obj("ns", "a", "1")));
  auto old = c.upsert(obj("ns", "a", "2"));
  ASSERT_TRUE(old);
  EXPECT_EQ(rv(old), "1");
  EXPECT_EQ(rv(c.get("ns", "a")), "2");
  EXPECT_EQ(rv(c.get("ns/a")), "2");
  EXPECT_EQ(c.size(), 1u);
}

TEST(ObjectCache, HandsOutTheStoredObjectNotACopy) {
  ObjectCache c;
  auto stored = obj("ns", "a", "1", "j");
  c.upsert(stored);
  EXPECT_EQ(c.get("ns/a").get(), stored.get());
  EXPECT_EQ(c.list().front().get(), stored.get());
  EXPECT_EQ(c.list_matching({{"ddp3d.io/job-name", "j"}}).front().get(), stored.get());
  // A reader keeps its version alive after the cache moved on.
  auto held = c.get("ns/a");
  c.upsert(obj("ns", "a", "2", "j"));
  c.erase("ns/a");
  EXPECT_EQ(rv(held), "1");
}

TEST(ObjectCache, EraseByKey) {
  ObjectCache c;
  c.upsert(obj("ns", "a", "1"));
  auto gone = c.erase("ns/a");
  ASSERT_TRUE(gone);
  EXPECT_EQ(rv(gone), "1");
  EXPECT_FALSE(c.get("ns", "a"));
  EXPECT_FALSE(c.erase("ns/a"));
}

TEST(ObjectCache, ReplaceAllReportsObjectsThatDisappeared) {
  ObjectCache c;
  c.upsert(obj("ns", "a", "1"));
  c.upsert(obj("ns", "b", "1"));
  c.upsert(obj("other", "a", "1"));
  std::vector<std::string> removed;
  c.replace_all({obj("ns", "b", "2"), obj("ns", "c", "1")}, [&](const ObjectPtr& v) {
    removed.push_back(v->at("metadata").at("namespace").as_string() + "/" +
                      v->at("metadata").at("name").as_string());
  });
  EXPECT_EQ(removed, (Names{"ns/a", "other/a"}));
  EXPECT_EQ(c.keys(), (Names{"ns/b", "ns/c"}));
  EXPECT_EQ(rv(c.get("ns", "b")), "2");
}

TEST(ObjectCache, ListsByNamespaceAndLabels) {
  ObjectCache c;
  c.upsert(obj("a", "x", "1", "j1"));
  c.upsert(obj("ab", "y", "1", "j1"));  // "ab/" must not match the namespace "a"
  c.upsert(obj("a", "z", "1", "j2"));
  c.upsert(obj("", "cluster-scoped", "1"));
  EXPECT_EQ(names(c.list_namespace("a")), (Names{"x", "z"}));
  EXPECT_EQ(names(c.list_namespace("ab")), (Names{"y"}));
  EXPECT_EQ(names(c.list_matching({{"ddp3d.io/job-name", "j1"}})), (Names{"x", "y"}));
  EXPECT_EQ(names(c.list_matching({{"ddp3d.io/job-name", "j1"}}, "a")), (Names{"x"}));
  EXPECT_EQ(names(c.list_matching({{"ddp3d.io/job-name", "j1"}}, "ab")), (Names{"y"}));
  EXPECT_TRUE(c.list_matching({{"ddp3d.io/job-name", "none"}}).empty());
  EXPECT_EQ(c.list_matching({}, "a").size(), 2u) << "no labels: the whole namespace";
  EXPECT_TRUE(c.get("", "cluster-scoped"));
  EXPECT_EQ(c.list().size(), 4u);
}

TEST(ObjectCache, EveryLabelPairMustMatch) {
  ObjectCache c;
  c.upsert(obj({"ns", "r0", "1", {{"job", "j"}, {"rank", "0"}}, {}}));
  c.upsert(obj({"ns", "r1", "1", {{"job", "j"}, {"rank", "1"}}, {}}));
  c.upsert(obj({"ns", "other-r0", "1", {{"job", "k"}, {"rank", "0"}}, {}}));
  EXPECT_EQ(names(c.list_matching({{"job", "j"}, {"rank", "0"}})), (Names{"r0"}));
  EXPECT_EQ(names(c.list_matching({{"rank", "0"}})), (Names{"other-r0", "r0"}));
  EXPECT_TRUE(c.list_matching({{"job", "j"}, {"rank", "2"}}).empty());
  // A value equal to another key's value must not match across keys.
  EXPECT_TRUE(c.list_matching({{"job", "0"}}).empty());
}

TEST(ObjectCache, LabelChangeMovesTheObjectBetweenBuckets) {
  ObjectCache c;
  c.upsert(obj("ns", "p", "1", "j1"));
  c.upsert(obj("ns", "p", "2", "j2"));
  EXPECT_TRUE(c.list_matching({{"ddp3d.io/job-name", "j1"}}).empty()) << "old bucket left";
  ASSERT_EQ(c.list_matching({{"ddp3d.io/job-name", "j2"}}).size(), 1u);
  EXPECT_EQ(rv(c.list_matching({{"ddp3d.io/job-name", "j2"}}).front()), "2");
  c.upsert(obj("ns", "p", "3"));  // label removed altogether
  EXPECT_TRUE(c.list_matching({{"ddp3d.io/job-name", "j2"}}).empty());
  EXPECT_EQ(c.size(), 1u);
}

TEST(ObjectCache, OwnerIndexFollowsUpsertEraseAndReplaceAll) {
  ObjectCache c;
  c.upsert(obj({"ns", "a0", "1", {}, {"uid-a"}}));
  c.upsert(obj({"ns", "a1", "1", {}, {"uid-a"}}));
  c.upsert(obj({"ns", "b0", "1", {}, {"uid-b"}}));
  c.upsert(obj({"ns", "both", "1", {}, {"uid-a", "uid-b"}}));
  EXPECT_EQ(names(c.list_owned_by("uid-a")), (Names{"a0", "a1", "both"}));
  EXPECT_EQ(names(c.list_owned_by("uid-b")), (Names{"b0", "both"}));
  EXPECT_TRUE(c.list_owned_by("uid-none").empty());

  c.erase("ns/a1");
  EXPECT_EQ(names(c.list_owned_by("uid-a")), (Names{"a0", "both"}));
  c.upsert(obj({"ns", "a0", "2", {}, {"uid-b"}}));  // owner changed (adopted by another)
  EXPECT_EQ(names(c.list_owned_by("uid-a")), (Names{"both"}));
  EXPECT_EQ(names(c.list_owned_by("uid-b")), (Names{"a0", "b0", "both"}));

  c.replace_all({obj({"ns", "c0", "1", {{"job", "c"}}, {"uid-c"}})});
  EXPECT_TRUE(c.list_owned_by("uid-a").empty()) << "indices rebuilt from the new content";
  EXPECT_TRUE(c.list_owned_by("uid-b").empty());
  EXPECT_EQ(names(c.list_owned_by("uid-c")), (Names{"c0"}));
  EXPECT_EQ(names(c.list_matching({{"job", "c"}})), (Names{"c0"}));
}

TEST(ObjectCache, ErasedObjectsLeaveNoIndexEntries) {
  ObjectCache c;
  for (int i = 0; i < 50; ++i)
    c.upsert(obj({"ns", "p" + std::to_string(i), "1", {{"job", "j"}}, {"uid"}}));
  for (int i = 0; i < 50; ++i) c.erase("ns/p" + std::to_string(i));
  EXPECT_EQ(c.size(), 0u);
  EXPECT_TRUE(c.list_matching({{"job", "j"}}).empty());
  EXPECT_TRUE(c.list_owned_by("uid").empty());
  // Re-adding under the same key is indexed once, not twice.
  c.upsert(obj({"ns", "p0", "1", {{"job", "j"}}, {"uid"}}));
  c.upsert(obj({"ns", "p0", "2", {{"job", "j"}}, {"uid"}}));
  EXPECT_EQ(c.list_matching({{"job", "j"}}).size(), 1u);
  EXPECT_EQ(c.list_owned_by("uid").size(), 1u);
}

TEST(ObjectCache, ObjectsWithoutMetadataOrWithOddLabelsAreStoredNotIndexed) {
  ObjectCache c;
  auto v = value::object();
  v["metadata"]["name"] = value::string("odd");
  v["metadata"]["namespace"] = value::string("ns");
  v["metadata"]["labels"]["n"] = value::number(3);  // not a string: not a label pair
  v["metadata"]["ownerReferences"] = value::string("not-an-array");
  c.upsert(std::make_shared<const value>(v));
  EXPECT_TRUE(c.get("ns/odd"));
  EXPECT_TRUE(c.list_matching({{"n", "3"}}).empty());
  EXPECT_EQ(c.list_namespace("ns").size(), 1u);
  EXPECT_FALSE(c.upsert(nullptr));
}

}  // namespace
}  // namespace ddp3d::kube
