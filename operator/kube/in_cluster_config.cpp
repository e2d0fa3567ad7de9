// Configuration of a process running in a pod: the API server's service address from the
// environment, credentials from the mounted service-account volume.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "operator/kube/config.h"
#include "operator/kube/errors.h"

namespace ddp3d::kube {

Config in_cluster_config(const std::filesystem::path& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    throw ConfigError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set "
        "(not running in a pod?)");
  Config cfg;
  cfg.origin = "in-cluster (" + sa_dir.string() + ")";
  const std::string h(host);
  // An IPv6 service address needs brackets in a URL.
  cfg.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;

  cfg.bearer_token_file = sa_dir / "token";
  if (!std::filesystem::exists(cfg.bearer_token_file))
    throw ConfigError("in-cluster config: token file " + cfg.bearer_token_file.string() +
                      " does not exist");
  const auto ca = sa_dir / "ca.crt";
  std::ifstream in(ca, std::ios::binary);
  if (!in) throw ConfigError("in-cluster config: cannot read CA file " + ca.string());
  std::ostringstream text;
  text << in.rdbuf();
  cfg.ca_pem = text.str();
  if (cfg.ca_pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos)
    throw ConfigError("in-cluster config: " + ca.string() + " holds no PEM certificate");

  std::ifstream ns_in(sa_dir / "namespace");
  std::string ns;
  if (ns_in && std::getline(ns_in, ns) && !ns.empty()) cfg.default_namespace = ns;
  return cfg;
}

}  // namespace ddp3d::kube
