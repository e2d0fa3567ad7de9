// Configuration of a process running in a pod: the API server's service address from the
// environment, credentials from the mounted service-account volume.
#include <cstdlib>

#include "common/io/regular_file.h"
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
  try {
    cfg.ca_pem = io::read_regular_file(ca, 4 * io::kMiB, "CA file");
  } catch (const io::FileError& e) {
    throw ConfigError(std::string("in-cluster config: ") + e.what());
  }
  if (cfg.ca_pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos)
    throw ConfigError("in-cluster config: " + ca.string() + " holds no PEM certificate");

  // Optional: without a readable namespace file the default namespace stays.
  std::string ns;
  try {
    ns = io::read_regular_file(sa_dir / "namespace", 64 * io::kKiB, "namespace file");
  } catch (const io::FileError&) {
  }
  ns = ns.substr(0, ns.find_first_of("\r\n"));
  if (!ns.empty()) cfg.default_namespace = ns;
  return cfg;
}

}  // namespace ddp3d::kube
