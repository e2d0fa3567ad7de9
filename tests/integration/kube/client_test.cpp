// The REST client against a real kube-apiserver: CRUD, optimistic concurrency, patches, the
// status subresource, delete preconditions, paging, TLS verification and token auth.
#include "operator/kube/client.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "control_plane.h"
#include "operator/kube/errors.h"
#include "test_util.h"

namespace ddp3d::kube {
namespace {

using testing::config_map;
using testing::ControlPlane;
using testing::data_value;
using web::json::value;

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ns = testing::unique_namespace("client");
    testing::create_namespace(client, ns);
  }
  Client client{ControlPlane::get().config()};
  std::string ns;
};

TEST_F(ClientTest, ConfigMapCreateGetReplacePatchDelete) {
  const auto& cms = resources::config_maps();
  value created = client.create(cms, ns, config_map("settings", {{"a", "1"}}, {{"app", "kt"}}));
  EXPECT_EQ(meta_namespace(created), ns);
  const std::string rv1 = meta_resource_version(created);
  ASSERT_FALSE(rv1.empty());

  EXPECT_THROW(client.create(cms, ns, config_map("settings", {})), AlreadyExistsError);
  value got = client.get(cms, ns, "settings");
  EXPECT_EQ(data_value(got, "a"), "1");
  EXPECT_EQ(meta_uid(got), meta_uid(created));

  // PUT with the current resourceVersion succeeds ...
  got["data"]["a"] = value::string("2");
  value replaced = client.replace(cms, ns, got);
  EXPECT_EQ(data_value(replaced, "a"), "2");
  EXPECT_NE(meta_resource_version(replaced), rv1);
  // ... and with the stale one it is a ConflictError carrying the server's message.
  got["data"]["a"] = value::string("3");
  try {
    client.replace(cms, ns, got);
    FAIL() << "stale replace accepted";
  } catch (const ConflictError& e) {
    EXPECT_EQ(e.http_status(), 409);
    EXPECT_EQ(e.reason(), "Conflict");
    EXPECT_NE(e.message().find("the object has been modified"), std::string::npos) << e.what();
  }

  // JSON merge patch: null deletes a key.
  value merge = value::parse(R"({"data":{"a":null,"b":"merged"}})");
  value patched = client.patch(cms, ns, "settings", merge);
  EXPECT_EQ(data_value(patched, "a"), "");
  EXPECT_EQ(data_value(patched, "b"), "merged");
  // RFC 6902 JSON patch.
  value ops = value::parse(R"([{"op":"add","path":"/data/c","value":"json-patched"}])");
  patched = client.patch(cms, ns, "settings", ops, PatchType::kJson);
  EXPECT_EQ(data_value(patched, "c"), "json-patched");
  // Strategic merge patch on a core type.
  patched = client.patch(cms, ns, "settings", value::parse(R"({"data":{"d":"smp"}})"),
                         PatchType::kStrategicMerge);
  EXPECT_EQ(data_value(patched, "d"), "smp");
  EXPECT_EQ(data_value(patched, "b"), "merged");

  DeleteOptions opts;
  opts.propagation_policy = "Background";
  client.remove(cms, ns, "settings", opts);
  EXPECT_FALSE(client.find(cms, ns, "settings"));
  EXPECT_THROW(client.get(cms, ns, "settings"), NotFoundError);
  try {
    client.remove(cms, ns, "settings");
    FAIL();
  } catch (const NotFoundError& e) {
    EXPECT_NE(e.message().find("settings"), std::string::npos) << e.what();
  }
}

TEST_F(ClientTest, DeletePreconditionsProtectANewerIncarnation) {
  const auto& cms = resources::config_maps();
  value first = client.create(cms, ns, config_map("c", {}));
  DeleteOptions stale;
  stale.precondition_uid = "00000000-0000-0000-0000-000000000000";
  EXPECT_THROW(client.remove(cms, ns, "c", stale), ConflictError);
  EXPECT_TRUE(client.find(cms, ns, "c"));
  DeleteOptions right;
  right.precondition_uid = meta_uid(first);
  right.precondition_resource_version = meta_resource_version(first);
  client.remove(cms, ns, "c", right);
  EXPECT_FALSE(client.find(cms, ns, "c"));
}

TEST_F(ClientTest, ListFollowsContinueTokensAndFiltersByLabel) {
  const auto& cms = resources::config_maps();
  for (int i = 0; i < 7; ++i)
    client.create(cms, ns,
                  config_map("cm-" + std::to_string(i), {}, {{"parity", i % 2 ? "odd" : "even"}}));
  ListOptions paged;
  paged.limit = 2;
  ObjectList all = client.list(cms, ns, paged);
  std::size_t ours = 0;
  for (const auto& item : all.items)
    if (meta_name(item).rfind("cm-", 0) == 0) ++ours;
  EXPECT_EQ(ours, 7u) << "4 pages of 2 must be joined";
  EXPECT_FALSE(all.resource_version.empty());
  EXPECT_EQ(all.items.front().at("kind").as_string(), "ConfigMap");

  ListOptions odd;
  odd.label_selector = "parity=odd";
  EXPECT_EQ(client.list(cms, ns, odd).items.size(), 3u);
  odd.label_selector = "parity in (odd,even)";
  EXPECT_EQ(client.list(cms, ns, odd).items.size(), 7u);
}

TEST(ClientStatus, PodStatusSubresourceIsSeparateFromSpec) {
  const std::string ns = testing::unique_namespace("status");
  ControlPlane::get().create_namespace(ns);
  Client client(ControlPlane::get().config());
  value pod = value::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-0",
      "labels":{"ddp3d.io/job-name":"j"}},
      "spec":{"containers":[{"name":"w","image":"busybox","command":["true"]}]}})");
  client.create(resources::pods(), ns, pod);

  // No kubelet runs here: the test plays it through the status subresource.
  value st = value::parse(R"({"status":{"phase":"Running"}})");
  value after = client.patch_status(resources::pods(), ns, "p-0", st);
  EXPECT_EQ(after.at("status").at("phase").as_string(), "Running");

  // A status write through the main resource is ignored by the server ...
  value current = client.get(resources::pods(), ns, "p-0");
  current["status"]["phase"] = value::string("Failed");
  current["metadata"]["labels"]["touched"] = value::string("yes");
  value replaced = client.replace(resources::pods(), ns, current);
  EXPECT_EQ(replaced.at("status").at("phase").as_string(), "Running");
  EXPECT_EQ(replaced.at("metadata").at("labels").at("touched").as_string(), "yes");
  // ... and honoured through /status, with optimistic concurrency like replace().
  replaced["status"]["phase"] = value::string("Succeeded");
  value status_put = client.replace_status(resources::pods(), ns, replaced);
  EXPECT_EQ(status_put.at("status").at("phase").as_string(), "Succeeded");
  EXPECT_THROW(client.replace_status(resources::pods(), ns, replaced), ConflictError);
}

TEST(ClientTls, ServerCertificateIsVerifiedAgainstTheConfiguredCa) {
  Config cfg = ControlPlane::get().config();
  ASSERT_FALSE(cfg.ca_pem.empty());
  // A CA that did not sign the server certificate (the client certificate is no CA at all).
  Config wrong = cfg;
  wrong.ca_pem = cfg.client_cert_pem;
  Client untrusted(wrong);
  EXPECT_THROW(untrusted.list(resources::namespaces(), ""), TransportError);
  // The escape hatch is explicit.
  wrong.insecure_skip_tls_verify = true;
  Client insecure(wrong);
  EXPECT_NO_THROW(insecure.list(resources::namespaces(), ""));
}

TEST(ClientTls, BadPemIsAConfigErrorAtConstruction) {
  Config cfg = ControlPlane::get().config();
  cfg.client_key_pem = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  EXPECT_THROW({ Client c(cfg); }, ConfigError);
}

TEST(ClientAuth, ServiceAccountTokenFromKubeconfigIsSent) {
  const std::string ns = testing::unique_namespace("auth");
  ControlPlane::get().create_namespace(ns);
  Client sa(load_kubeconfig(ControlPlane::get().sa_kubeconfig(ns, "default")));
  EXPECT_EQ(sa.config().default_namespace, ns);
  // RBAC grants the default ServiceAccount nothing: the server must know who is asking.
  try {
    sa.list(resources::config_maps(), ns);
    FAIL() << "the default ServiceAccount may not list configmaps";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 403);
    EXPECT_EQ(e.reason(), "Forbidden");
    EXPECT_NE(e.message().find("system:serviceaccount:" + ns + ":default"), std::string::npos)
        << e.what();
  }
}

// The same, with the token handed over by an exec credential plugin (a script standing in for
// `aws eks get-token`): the server must see the ServiceAccount the plugin's token belongs to.
TEST(ClientAuth, ExecPluginTokenIsSent) {
  const std::string ns = testing::unique_namespace("exec");
  ControlPlane::get().create_namespace(ns);
  Config cfg = load_kubeconfig(ControlPlane::get().sa_kubeconfig(ns, "default"));
  ASSERT_FALSE(cfg.bearer_token.empty());
  const auto script = std::filesystem::temp_directory_path() / ("ddp3d-exec-" + ns + ".sh");
  std::ofstream(script) << R"(#!/bin/sh
printf '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "%s"}}' "$SA_TOKEN"
)";
  chmod(script.c_str(), 0700);
  ExecPlugin plugin;
  plugin.api_version = "client.authentication.k8s.io/v1";
  plugin.command = script.string();
  plugin.env = {{"SA_TOKEN", cfg.bearer_token}};
  cfg.bearer_token.clear();
  cfg.exec = plugin;
  Client sa(cfg);
  try {
    sa.list(resources::config_maps(), ns);
    FAIL() << "the default ServiceAccount may not list configmaps";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 403);
    EXPECT_NE(e.message().find("system:serviceaccount:" + ns + ":default"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(script);
}

// A plugin token the server rejects (revoked before its expiry) is dropped on the 401 and the
// plugin asked once more; one that is rejected again fails with the 401 after two runs.
TEST(ClientAuth, A401DropsTheExecTokenAndRunsThePluginOnceMore) {
  const std::string ns = testing::unique_namespace("exec401");
  ControlPlane::get().create_namespace(ns);
  Config cfg = load_kubeconfig(ControlPlane::get().sa_kubeconfig(ns, "default"));
  ASSERT_FALSE(cfg.bearer_token.empty());
  const auto dir = std::filesystem::temp_directory_path() / ("ddp3d-exec401-" + ns);
  std::filesystem::create_directories(dir);
  const auto runs = dir / "runs";
  const auto script = dir / "plugin.sh";
  // Run 1 prints a token the server does not know; later runs print $GOOD_TOKEN.
  std::ofstream(script) << "#!/bin/sh\necho run >> '" << runs.string() << R"('
n=$(wc -l < ')" << runs.string()
                        << R"(' | tr -d ' ')
tok=$GOOD_TOKEN; [ "$n" = 1 ] && tok=revoked-token
printf '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "%s"}}' "$tok"
)";
  chmod(script.c_str(), 0700);
  auto count_runs = [&] {
    std::ifstream in(runs);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  };
  ExecPlugin plugin;
  plugin.api_version = "client.authentication.k8s.io/v1";
  plugin.command = script.string();
  plugin.env = {{"GOOD_TOKEN", cfg.bearer_token}};
  cfg.bearer_token.clear();
  cfg.exec = plugin;
  {
    Client sa(cfg);
    // 403, not 401: the second token was accepted and the server knows who is asking.
    try {
      sa.list(resources::config_maps(), ns);
      FAIL() << "the default ServiceAccount may not list configmaps";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.http_status(), 403) << e.what();
    }
    EXPECT_EQ(count_runs(), 2);
    EXPECT_THROW(sa.list(resources::config_maps(), ns), ApiError);
    EXPECT_EQ(count_runs(), 2) << "the accepted token is cached";
  }

  std::filesystem::remove(runs);
  cfg.exec->env = {{"GOOD_TOKEN", "also-revoked"}};
  Client rejected(cfg);
  try {
    rejected.list(resources::config_maps(), ns);
    FAIL() << "an unknown token was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 401) << e.what();
  }
  EXPECT_EQ(count_runs(), 2) << "one re-run, not a loop";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ddp3d::kube

namespace ddp3d::kube {
namespace {

// The custom resource path (ddp3d.io/v1alpha1 trainingjobs) against the project's real CRD:
// server-side defaults, the status subresource, and validation errors naming the field.
TEST(ClientCustomResource, TrainingJobCreateStatusAndValidation) {
  ControlPlane::get().kubectl("apply -f crds/");
  Client client(ControlPlane::get().config());
  const std::string ns = testing::unique_namespace("tj");
  testing::create_namespace(client, ns);
  const auto& tjs = resources::training_jobs();
  // A new CRD is served once it is established.
  ASSERT_TRUE(testing::eventually([&] {
    try {
      client.list(tjs, ns);
      return true;
    } catch (const NotFoundError&) {
      return false;
    }
  }));
  value job = value::parse(R"({"apiVersion":"ddp3d.io/v1alpha1","kind":"TrainingJob",
      "metadata":{"name":"pp"},
      "spec":{"nnodes":2,"gpusPerNode":0,"config":"configs/x.yaml","image":"ddp3d:test"}})");
  value created = client.create(tjs, ns, job);
  EXPECT_EQ(created.at("spec").at("port").as_integer(), 29500) << "CRD default applied";

  value st = value::parse(R"({"status":{"phase":"Running","restarts":1}})");
  value patched = client.patch_status(tjs, ns, "pp", st);
  EXPECT_EQ(patched.at("status").at("phase").as_string(), "Running");
  EXPECT_EQ(client.get(tjs, ns, "pp").at("status").at("restarts").as_integer(), 1);

  try {
    client.patch_status(tjs, ns, "pp", value::parse(R"({"status":{"phase":"Exploded"}})"));
    FAIL() << "invalid phase accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 422);
    EXPECT_EQ(e.reason(), "Invalid");
    EXPECT_NE(e.message().find("status.phase"), std::string::npos) << e.what();
  }
  job["metadata"]["name"] = value::string("zero");
  job["spec"]["nnodes"] = value::number(0);
  try {
    client.create(tjs, ns, job);
    FAIL() << "nnodes 0 accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 422);
    EXPECT_NE(e.message().find("spec.nnodes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ddp3d::kube
