#include "operator/cli/operator_options.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <optional>

namespace ddp3d::op {

namespace {

int parse_int(const std::string& flag, const std::string& text, int min, int max) {
  int v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < min || v > max) {
    throw UsageError(flag + ": expected an integer in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got \"" + text + "\"");
  }
  return v;
}

std::vector<std::string> split_commas(const std::string& flag, const std::string& text,
                                      const char* item = "namespace") {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // "", ",a", "a,,b" and "a," each leave an empty part.
  if (std::find(out.begin(), out.end(), "") != out.end())
    throw UsageError(flag + ": empty " + item + " in \"" + text + "\"");
  return out;
}

}  // namespace

ListenAddress parse_listen_address(const std::string& flag, const std::string& text) {
  ListenAddress a;
  if (text.empty() || text == "0") {
    a.enabled = false;
    return a;
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    throw UsageError(flag + ": expected host:port or :port, got \"" + text + "\"");
  }
  std::string host = text.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";
  if (host == "localhost") host = "127.0.0.1";
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) != 1) {
    throw UsageError(flag + ": host must be an IPv4 address or localhost, got \"" + host + "\"");
  }
  a.host = host;
  a.port = static_cast<std::uint16_t>(parse_int(flag, text.substr(colon + 1), 0, 65535));
  return a;
}

std::string operator_usage() {
  return R"(usage: ddp3d-operator [flags]

Reconciles ddp3d.io/v1alpha1 TrainingJobs into a headless Service and one pod per node.

  --kubeconfig PATH                 kubeconfig to use (default: $KUBECONFIG, in-cluster
                                    service account, then ~/.kube/config)
  --namespace NS[,NS...]            namespace(s) to watch; repeatable (default: all)
  --leader-elect                    run only while holding the Lease (for >1 replica)
  --leader-election-namespace NS    namespace of the Lease (default: $POD_NAMESPACE or default)
  --leader-election-id NAME         name of the Lease (default: ddp3d-operator)
  --metrics-address HOST:PORT       /metrics listen address (default :8080; 0 disables)
  --health-address HOST:PORT        /healthz and /readyz address (default :8081; 0 disables)
  --workers N                       concurrent reconciles (default 4)
  --resync-seconds N                re-examine every job this often (default 300)
  --progress-probe-seconds N        read every Running pod's /metrics (training progress,
                                    progressDeadlineSeconds) this often (default 15; 0: never)
  --progress-probe-timeout-ms N     time one /metrics read may take (default 2000)
  --shutdown-grace-seconds N        on SIGTERM, time to finish the queued work and release
                                    the Lease before requests in flight and exec credential
                                    plugins are cut off (default 3; the Lease release gets
                                    1 s more)
  --watch-nodes=true|false          watch Nodes (cluster-wide list/watch) to restart jobs
                                    whose node stopped answering and force-delete their
                                    pods left on it (default true)
  --kueue=true|false                admit jobs labelled kueue.x-k8s.io/queue-name through
                                    Kueue's Workloads (default true); false: such jobs wait
                                    as Queued, never run outside the quota
  --trusted-namespaces NS[,NS...]   namespaces whose jobs may set spec.podSecurity: Trusted
                                    (pod template unchecked; default: none)
  --allowed-service-accounts SA[,SA...]
                                    service accounts a Restricted pod template may name
                                    (default: default)
  -h, --help                        this text
)";
}

OperatorOptions parse_operator_options(const std::vector<std::string>& args) {
  OperatorOptions o;
  using Setter = std::function<void(const std::string& flag, const std::string& value)>;
  const std::map<std::string, Setter> with_value = {
      {"--kubeconfig",
       [&](const std::string& f, const std::string& v) {
         if (v.empty()) throw UsageError(f + ": empty path");
         o.kubeconfig = v;
       }},
      {"--namespace",
       [&](const std::string& f, const std::string& v) {
         for (auto& ns : split_commas(f, v)) o.namespaces.push_back(ns);
       }},
      {"--leader-election-namespace",
       [&](const std::string&, const std::string& v) { o.leader_election_namespace = v; }},
      {"--leader-election-id",
       [&](const std::string& f, const std::string& v) {
         if (v.empty()) throw UsageError(f + ": empty name");
         o.leader_election_id = v;
       }},
      {"--metrics-address",
       [&](const std::string& f, const std::string& v) { o.metrics = parse_listen_address(f, v); }},
      {"--health-address",
       [&](const std::string& f, const std::string& v) { o.health = parse_listen_address(f, v); }},
      {"--workers",
       [&](const std::string& f, const std::string& v) { o.workers = parse_int(f, v, 1, 256); }},
      {"--resync-seconds",
       [&](const std::string& f, const std::string& v) {
         o.resync_seconds = parse_int(f, v, 0, 86400);
       }},
      {"--progress-probe-seconds",
       [&](const std::string& f, const std::string& v) {
         o.progress_probe_seconds = parse_int(f, v, 0, 3600);
       }},
      {"--progress-probe-timeout-ms",
       [&](const std::string& f, const std::string& v) {
         o.progress_probe_timeout_ms = parse_int(f, v, 10, 60000);
       }},
      {"--shutdown-grace-seconds",
       [&](const std::string& f, const std::string& v) {
         o.shutdown_grace_seconds = parse_int(f, v, 0, 3600);
       }},
      // "" clears the list (a chart value left empty).
      {"--trusted-namespaces",
       [&](const std::string& f, const std::string& v) {
         o.template_policy.trusted_namespaces =
             v.empty() ? std::vector<std::string>{} : split_commas(f, v);
       }},
      {"--allowed-service-accounts", [&](const std::string& f, const std::string& v) {
         o.template_policy.allowed_service_accounts =
             v.empty() ? std::vector<std::string>{} : split_commas(f, v, "service account");
       }}};
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> value;
    if (const size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    if (flag == "--namespaces") flag = "--namespace";
    if (flag == "-h" || flag == "--help") {
      o.help = true;
      continue;
    }
    if (flag == "--leader-elect" || flag == "--watch-nodes" || flag == "--kueue") {
      if (value && *value != "true" && *value != "false") {
        throw UsageError(flag + ": expected true or false, got \"" + *value + "\"");
      }
      bool& target = flag == "--leader-elect"  ? o.leader_elect
                     : flag == "--watch-nodes" ? o.watch_nodes
                                               : o.kueue;
      target = !value || *value == "true";
      continue;
    }
    auto it = with_value.find(flag);
    if (it == with_value.end()) {
      throw UsageError("unknown flag \"" + args[i] + "\" (see --help)");
    }
    if (!value) {
      if (i + 1 >= args.size()) throw UsageError(flag + ": missing value");
      value = args[++i];
    }
    it->second(flag, *value);
  }
  return o;
}

}  // namespace ddp3d::op
