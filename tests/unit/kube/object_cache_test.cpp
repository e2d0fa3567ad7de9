#include "operator/kube/object_cache.h"

#include <gtest/gtest.h>

namespace ddp3d::kube {
namespace {

web::json::value obj(const std::string& ns, const std::string& name, const std::string& rv,
                     const std::string& job = "") {
  auto v = web::json::value::object();
  v["metadata"]["name"] = web::json::value::string(name);
  if (!ns.empty()) v["metadata"]["namespace"] = web::json::value::string(ns);
  v["metadata"]["resourceVersion"] = web::json::value::string(rv);
  if (!job.empty()) v["metadata"]["labels"]["ddp3d.io/job-name"] = web::json::value::string(job);
  return v;
}

std::string rv(const web::json::value& v) {
  return v.at("metadata").at("resourceVersion").as_string();
}

TEST(ObjectCache, UpsertReturnsThePreviousVersion) {
  ObjectCache c;
  EXPECT_FALSE(c.upsert(obj("ns", "a", "1")));
  auto old = c.upsert(obj("ns", "a", "2"));
  ASSERT_TRUE(old);
  EXPECT_EQ(rv(*old), "1");
  EXPECT_EQ(rv(*c.get("ns", "a")), "2");
  EXPECT_EQ(rv(*c.get("ns/a")), "2");
  EXPECT_EQ(c.size(), 1u);
}

TEST(ObjectCache, EraseByKey) {
  ObjectCache c;
  c.upsert(obj("ns", "a", "1"));
  auto gone = c.erase(obj("ns", "a", "5"));
  ASSERT_TRUE(gone);
  EXPECT_EQ(rv(*gone), "1");
  EXPECT_FALSE(c.get("ns", "a"));
  EXPECT_FALSE(c.erase(obj("ns", "a", "5")));
}

TEST(ObjectCache, ReplaceAllReportsObjectsThatDisappeared) {
  ObjectCache c;
  c.upsert(obj("ns", "a", "1"));
  c.upsert(obj("ns", "b", "1"));
  c.upsert(obj("other", "a", "1"));
  std::vector<std::string> removed;
  c.replace_all({obj("ns", "b", "2"), obj("ns", "c", "1")}, [&](const web::json::value& v) {
    removed.push_back(v.at("metadata").at("namespace").as_string() + "/" +
                      v.at("metadata").at("name").as_string());
  });
  EXPECT_EQ(removed, (std::vector<std::string>{"ns/a", "other/a"}));
  EXPECT_EQ(c.keys(), (std::vector<std::string>{"ns/b", "ns/c"}));
  EXPECT_EQ(rv(*c.get("ns", "b")), "2");
}

TEST(ObjectCache, ListsByNamespaceAndLabels) {
  ObjectCache c;
  c.upsert(obj("a", "x", "1", "j1"));
  c.upsert(obj("ab", "y", "1", "j1"));  // "ab/" must not match the prefix "a/"
  c.upsert(obj("a", "z", "1", "j2"));
  c.upsert(obj("", "cluster-scoped", "1"));
  EXPECT_EQ(c.list_namespace("a").size(), 2u);
  EXPECT_EQ(c.list_namespace("ab").size(), 1u);
  EXPECT_EQ(c.list_matching({{"ddp3d.io/job-name", "j1"}}).size(), 2u);
  EXPECT_EQ(c.list_matching({{"ddp3d.io/job-name", "j1"}}, "a").size(), 1u);
  EXPECT_EQ(c.list_matching({{"ddp3d.io/job-name", "none"}}).size(), 0u);
  EXPECT_TRUE(c.get("", "cluster-scoped"));
  EXPECT_EQ(c.list().size(), 4u);
}

}  // namespace
}  // namespace ddp3d::kube
