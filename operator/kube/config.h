// How to reach and authenticate to an API server: from a kubeconfig file or from inside a
// pod (service-account token, CA and KUBERNETES_SERVICE_HOST/PORT).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddp3d::kube {

// A kubeconfig `users[].user.exec` credential plugin (client.authentication.k8s.io), e.g.
// `aws eks get-token` or `gke-gcloud-auth-plugin`: a command that prints an ExecCredential
// whose status carries a bearer token.
struct ExecPlugin {
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string command;      // a path with '/' is resolved against the kubeconfig's folder
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // over the operator's environment
  bool provide_cluster_info = false;  // pass server and CA in KUBERNETES_EXEC_INFO
};

struct Config {
  std::string server;  // "https://127.0.0.1:6443" (no trailing slash)
  std::string ca_pem;  // trusted CA bundle (PEM); empty = system trust store
  bool insecure_skip_tls_verify = false;
  std::string client_cert_pem;  // client certificate chain (PEM), with client_key_pem
  std::string client_key_pem;
  std::string bearer_token;  // static token
  std::filesystem::path
      bearer_token_file;           // token re-read when the file changes (wins over bearer_token)
  std::optional<ExecPlugin> exec;  // token from a credential plugin (wins over both)
  std::string default_namespace = "default";
  std::string origin;  // where this came from, for log and error messages
  std::chrono::milliseconds request_timeout{30000};
  std::string user_agent = "ddp3d-operator";
};

// Reads a kubeconfig file. `context` empty = the file's current-context. Relative file paths
// inside (certificate-authority, client-certificate, client-key, tokenFile) are resolved
// against the kubeconfig's folder; *-data fields are base64 PEM. Throws ConfigError naming
// the file and the key that is missing or bad.
Config load_kubeconfig(const std::filesystem::path& path, const std::string& context = {});

// Same, from YAML text; `path` is used for messages and to resolve relative paths.
Config parse_kubeconfig(const std::string& yaml_text, const std::filesystem::path& path,
                        const std::string& context = {});

// In-cluster configuration: server from KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT,
// token file `<sa_dir>/token` (re-read on change), CA `<sa_dir>/ca.crt`, namespace from
// `<sa_dir>/namespace`. Throws ConfigError when not running in a cluster.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
Config in_cluster_config(const std::filesystem::path& sa_dir = kServiceAccountDir);

// The usual lookup order: explicit `kubeconfig` path, else $KUBECONFIG (first entry), else
// in-cluster when KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
Config load_default_config(const std::string& kubeconfig = {});

}  // namespace ddp3d::kube
