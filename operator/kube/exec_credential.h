// Bearer tokens from a kubeconfig exec credential plugin (client.authentication.k8s.io), as
// client-go runs them: the plugin gets KUBERNETES_EXEC_INFO, prints an ExecCredential, and its
// token is used until shortly before status.expirationTimestamp (for good when there is none).
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
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

class ExecCredentialSource {
 public:
  ExecCredentialSource(ExecPlugin plugin, std::string server, std::string ca_pem);

  // The cached token, or a new one from the plugin when there is none yet or it expires within
  // 10 s. Throws ConfigError when the plugin cannot start, exits non-zero (with the end of its
  // stderr), runs longer than a minute, or prints no usable ExecCredential.
  std::string token();

 private:
  std::string run_plugin() const;

  ExecPlugin plugin_;
  std::string server_;
  std::string ca_pem_;
  std::mutex mu_;
  std::optional<ExecCredentialToken> cached_;
};

}  // namespace ddp3d::kube
