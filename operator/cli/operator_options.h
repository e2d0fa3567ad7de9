// Command-line options of ddp3d-operator, parsed without side effects so bad input is tested
// and reported before anything connects anywhere.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "operator/api/template_policy_options.h"

namespace ddp3d::op {

struct ListenAddress {
  std::string host = "0.0.0.0";  // IPv4 literal
  std::uint16_t port = 0;
  bool enabled = true;  // "0" or "" disables the endpoint
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

struct OperatorOptions {
  std::string kubeconfig;               // "" = $KUBECONFIG, in-cluster, ~/.kube/config
  std::vector<std::string> namespaces;  // empty = all namespaces
  bool leader_elect = false;
  std::string leader_election_namespace;              // "" = $POD_NAMESPACE, else "default"
  std::string leader_election_id = "ddp3d-operator";  // the Lease's name
  ListenAddress metrics{"0.0.0.0", 8080, true};
  ListenAddress health{"0.0.0.0", 8081, true};
  int workers = 4;
  int resync_seconds = 300;
  int progress_probe_seconds = 15;  // 0 disables the progress probe
  bool watch_nodes = true;          // Node informer: lost nodes (runPolicy.nodeLossTimeoutSeconds)
  bool kueue = true;                // Kueue's Workloads for jobs labelled kueue.x-k8s.io/queue-name
  int progress_probe_timeout_ms = 2000;  // one /metrics read, connect to last byte
  int shutdown_grace_seconds = 3;       // graceful stop on SIGTERM, then in-flight requests are cut
  api::TemplatePolicy template_policy;  // --trusted-namespaces, --allowed-service-accounts
  bool help = false;
};

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses argv (argv[0] skipped). Accepts "--flag value" and "--flag=value"; --namespace may
// repeat and takes comma lists (--namespaces is an alias). Throws UsageError naming the flag.
OperatorOptions parse_operator_options(const std::vector<std::string>& args);
// "host:port", ":port" (all interfaces), "localhost:port"; "0" disables. Throws UsageError.
ListenAddress parse_listen_address(const std::string& flag, const std::string& text);

std::string operator_usage();

}  // namespace ddp3d::op
