// Bearer tokens from a kubeconfig exec credential plugin (client.authentication.k8s.io), as
// client-go runs them: the plugin gets KUBERNETES_EXEC_INFO, prints an ExecCredential, and its
// token is used until shortly before status.expirationTimestamp (for good when there is none).
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "operator/kube/config.h"

namespace ddp3d::kube {

struct ExecCredentialToken {
  std::string token;
  std::optional<std::chrono::system_clock::time_point> expires;
};

// What the plugin printed. Throws ConfigError naming the plugin and what is wrong: not JSON,
// another kind or apiVersion, no status.token (a client certificate alone is not supported),
// a bad expirationTimestamp.
ExecCredentialToken parse_exec_credential(const std::string& json_text, const ExecPlugin& plugin);

// KUBERNETES_EXEC_INFO for the plugin: non-interactive, with the cluster's server and CA when
// the kubeconfig sets provideClusterInfo.
std::string exec_info_json(const ExecPlugin& plugin, const std::string& server,
                           const std::string& ca_pem);

// How long a plugin may run and how much it may print (settable for tests).
struct ExecLimits {
  std::chrono::milliseconds timeout{30000};  // the whole run; a request deadline may cut it
  std::size_t max_output_bytes = std::size_t{1024} * 1024;
};

class ExecCredentialSource {
 public:
  ExecCredentialSource(ExecPlugin plugin, std::string server, std::string ca_pem,
                       ExecLimits limits = {});

  // The cached token, or a new one from the plugin when there is none yet or it expires within
  // 10 s. The plugin runs in its own process group with the kubeconfig's env over the
  // inherited one; the group is killed when the plugin outlives `limits.timeout` (or the
  // calling thread's ScopedRequestDeadline) or prints more than `limits.max_output_bytes`.
  // Throws ConfigError naming the plugin when it cannot start, exits non-zero (with the end
  // of its stderr), times out, prints too much, or prints no usable ExecCredential.
  std::string token();
  // Drops the cached token (the API server answered 401), so the next token() runs the
  // plugin again.
  void invalidate();
  // For a client that is shut off (Client::abort): a plugin running now has its process group
  // killed at once and its token() throws; later calls throw without running it. For good.
  // Thread-safe, and does not wait for a token() in progress.
  void cancel();

 private:
  std::string run_plugin() const;

  ExecPlugin plugin_;
  std::string server_;
  std::string ca_pem_;
  ExecLimits limits_;
  std::stop_source cancelled_;
  std::mutex mu_;
  std::optional<ExecCredentialToken> cached_;
};

}  // namespace ddp3d::kube
