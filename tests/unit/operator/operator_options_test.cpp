#include "operator/cli/operator_options.h"

#include <gtest/gtest.h>

namespace ddp3d::op {
namespace {

TEST(OperatorOptions, Defaults) {
  const auto o = parse_operator_options({});
  EXPECT_TRUE(o.namespaces.empty());
  EXPECT_FALSE(o.leader_elect);
  EXPECT_EQ(o.metrics.to_string(), "0.0.0.0:8080");
  EXPECT_EQ(o.health.to_string(), "0.0.0.0:8081");
  EXPECT_EQ(o.workers, 4);
}

TEST(OperatorOptions, EveryFlag) {
  const auto o = parse_operator_options(
      {"--kubeconfig", "/k", "--namespace", "a,b", "--namespace=c", "--namespaces=d",
       "--leader-elect", "--leader-election-namespace", "sys", "--leader-election-id=lock",
       "--metrics-address", "127.0.0.1:9000", "--health-address=:0", "--workers", "8",
       "--resync-seconds=0", "--progress-probe-seconds", "0", "--progress-probe-timeout-ms=500"});
  EXPECT_EQ(o.kubeconfig, "/k");
  EXPECT_EQ(o.namespaces, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_TRUE(o.leader_elect);
  EXPECT_EQ(o.leader_election_namespace, "sys");
  EXPECT_EQ(o.leader_election_id, "lock");
  EXPECT_EQ(o.metrics.to_string(), "127.0.0.1:9000");
  EXPECT_EQ(o.health.to_string(), "0.0.0.0:0");
  EXPECT_EQ(o.workers, 8);
  EXPECT_EQ(o.resync_seconds, 0);
  EXPECT_EQ(o.progress_probe_seconds, 0);
  EXPECT_EQ(o.progress_probe_timeout_ms, 500);
  EXPECT_EQ(parse_operator_options({}).progress_probe_seconds, 15);
  EXPECT_THROW(parse_operator_options({"--progress-probe-seconds=-1"}), UsageError);
  EXPECT_THROW(parse_operator_options({"--progress-probe-timeout-ms=5"}), UsageError);
  EXPECT_EQ(parse_operator_options({"--shutdown-grace-seconds", "7"}).shutdown_grace_seconds, 7);
  EXPECT_EQ(parse_operator_options({}).shutdown_grace_seconds, 3);
  EXPECT_EQ(parse_operator_options({"--shutdown-grace-seconds=0"}).shutdown_grace_seconds, 0);
  EXPECT_THROW(parse_operator_options({"--shutdown-grace-seconds=-1"}), UsageError);
  EXPECT_FALSE(parse_operator_options({"--metrics-address=0"}).metrics.enabled);
  EXPECT_FALSE(parse_operator_options({"--leader-elect=false"}).leader_elect);
  EXPECT_TRUE(parse_operator_options({}).watch_nodes);
  EXPECT_FALSE(parse_operator_options({"--watch-nodes=false"}).watch_nodes);
  EXPECT_TRUE(parse_operator_options({"--watch-nodes"}).watch_nodes);
  EXPECT_TRUE(parse_operator_options({}).kueue);
  EXPECT_FALSE(parse_operator_options({"--kueue=false"}).kueue);
  EXPECT_TRUE(parse_operator_options({"-h"}).help);
}

TEST(OperatorOptions, TemplatePolicyFlags) {
  const auto defaults = parse_operator_options({});
  EXPECT_TRUE(defaults.template_policy.trusted_namespaces.empty());
  EXPECT_EQ(defaults.template_policy.allowed_service_accounts, std::vector<std::string>{"default"});
  const auto o = parse_operator_options(
      {"--trusted-namespaces=infra,research", "--allowed-service-accounts", "default,reader"});
  EXPECT_EQ(o.template_policy.trusted_namespaces, (std::vector<std::string>{"infra", "research"}));
  EXPECT_EQ(o.template_policy.allowed_service_accounts,
            (std::vector<std::string>{"default", "reader"}));
  // An empty chart value renders as "--flag=": no namespace trusted, no account allowed.
  const auto empty =
      parse_operator_options({"--trusted-namespaces=", "--allowed-service-accounts="});
  EXPECT_TRUE(empty.template_policy.trusted_namespaces.empty());
  EXPECT_TRUE(empty.template_policy.allowed_service_accounts.empty());
}

TEST(OperatorOptions, UsageErrorsNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--bogus"}, "unknown flag \"--bogus\""},
      {{"--workers", "0"}, "--workers: expected an integer in [1, 256], got \"0\""},
      {{"--workers", "x"}, "--workers"},
      {{"--workers"}, "--workers: missing value"},
      {{"--namespace", "a,,b"}, "--namespace: empty namespace"},
      {{"--trusted-namespaces", "a,"}, "--trusted-namespaces: empty namespace"},
      {{"--allowed-service-accounts", ",x"}, "--allowed-service-accounts: empty service account"},
      {{"--metrics-address", "8080"}, "--metrics-address: expected host:port"},
      {{"--health-address", "example.com:80"}, "--health-address: host must be an IPv4"},
      {{"--metrics-address", ":70000"}, "--metrics-address: expected an integer in [0, 65535]"},
      {{"--leader-elect=maybe"}, "--leader-elect: expected true or false"},
      {{"--watch-nodes=no"}, "--watch-nodes: expected true or false, got \"no\""},
      {{"--kueue=off"}, "--kueue: expected true or false, got \"off\""},
      {{"--kubeconfig="}, "--kubeconfig: empty path"},
  };
  for (const auto& [args, want] : cases) {
    try {
      parse_operator_options(args);
      ADD_FAILURE() << "no error for " << args[0];
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ddp3d::op
