// Kubeconfig reading (the subset client-go honours for static credentials).
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "common/io/regular_file.h"
#include "operator/kube/base64.h"
#include "operator/kube/config.h"
#include "operator/kube/errors.h"

namespace ddp3d::kube {
namespace {

// A kubeconfig is a few KB; certificates and keys a few KB each.
constexpr std::uint64_t kMaxKubeconfigBytes = 16 * io::kMiB;
constexpr std::uint64_t kMaxPemBytes = 4 * io::kMiB;

class Reader {
 public:
  explicit Reader(std::filesystem::path path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError("kubeconfig " + path_.string() + ": " + what);
  }

  std::string str(const YAML::Node& node, const std::string& key, const std::string& where) const {
    const YAML::Node v = node[key];
    if (!v) return {};
    if (!v.IsScalar()) fail(where + "." + key + " must be a string");
    return v.as<std::string>();
  }

  bool flag(const YAML::Node& node, const std::string& key, const std::string& where) const {
    const YAML::Node v = node[key];
    if (!v) return false;
    try {
      return v.as<bool>();
    } catch (const YAML::Exception&) {
      fail(where + "." + key + " must be true or false");
    }
  }

  YAML::Node inner_map(const YAML::Node& entry, const std::string& section,
                       const std::string& inner, const std::string& name) const {
    const YAML::Node body = entry[inner];
    if (!body || !body.IsMap())
      fail(section + "[name=" + name + "]." + inner + " is missing or not a map");
    return body;
  }

  // The entry `name` of the list `section` (clusters/contexts/users): its inner map `inner`.
  YAML::Node named(const YAML::Node& root, const std::string& section, const std::string& inner,
                   const std::string& name, const std::string& referenced_by) const {
    const YAML::Node list = root[section];
    if (list && !list.IsSequence()) fail("'" + section + "' must be a list");
    if (list) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const YAML::Node entry = list[i];
        if (!entry.IsMap() || !entry["name"]) continue;
        const std::string where = section + "[" + std::to_string(i) + "]";
        if (str(entry, "name", where) == name) return inner_map(entry, section, inner, name);
      }
    }
    fail(referenced_by + " refers to '" + name + "', which is not in '" + section + "'");
  }

  std::filesystem::path resolve(const std::string& p) const {
    std::filesystem::path file(p);
    if (file.is_relative()) file = path_.parent_path() / file;
    return file;
  }

  std::string read_file(const std::string& p, const std::string& key) const {
    const auto file = resolve(p);
    try {
      return io::read_regular_file(file, kMaxPemBytes, "PEM file");
    } catch (const io::FileError& e) {
      fail(key + ": cannot read " + e.what());
    }
  }

  ExecPlugin exec_plugin(const YAML::Node& exec, const std::string& where) const {
    if (!exec.IsMap()) fail(where + " must be a map");
    ExecPlugin p;
    p.api_version = str(exec, "apiVersion", where);
    if (p.api_version != "client.authentication.k8s.io/v1" &&
        p.api_version != "client.authentication.k8s.io/v1beta1") {
      fail(where + ".apiVersion must be client.authentication.k8s.io/v1 or /v1beta1, got '" +
           p.api_version + "'");
    }
    p.command = str(exec, "command", where);
    if (p.command.empty()) fail(where + ".command is missing");
    if (p.command.find('/') != std::string::npos) p.command = resolve(p.command).string();
    if (const YAML::Node args = exec["args"]) {
      if (!args.IsSequence()) fail(where + ".args must be a list of strings");
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (!args[i].IsScalar()) fail(where + ".args[" + std::to_string(i) + "] must be a string");
        p.args.push_back(args[i].as<std::string>());
      }
    }
    if (const YAML::Node env = exec["env"]) {
      if (!env.IsSequence()) fail(where + ".env must be a list of {name, value}");
      for (std::size_t i = 0; i < env.size(); ++i) {
        const std::string at = where + ".env[" + std::to_string(i) + "]";
        if (!env[i].IsMap()) fail(at + " must be a map with name and value");
        const std::string name = str(env[i], "name", at);
        if (name.empty()) fail(at + ".name is missing");
        p.env.emplace_back(name, str(env[i], "value", at));
      }
    }
    // The operator runs unattended: a plugin that must prompt cannot work here.
    if (str(exec, "interactiveMode", where) == "Always")
      fail(where + ".interactiveMode is Always, but the operator cannot answer prompts");
    p.provide_cluster_info = flag(exec, "provideClusterInfo", where);
    return p;
  }

  // PEM from either `<key>-data` (base64) or `<key>` (a file path); "" when neither is set.
  std::string pem(const YAML::Node& node, const std::string& key, const std::string& where) const {
    const std::string data = str(node, key + "-data", where);
    if (!data.empty()) {
      try {
        return base64_decode(data);
      } catch (const std::invalid_argument& e) {
        fail(where + "." + key + "-data: " + e.what());
      }
    }
    const std::string file = str(node, key, where);
    if (!file.empty()) return read_file(file, where + "." + key);
    return {};
  }

 private:
  std::filesystem::path path_;
};

}  // namespace

Config parse_kubeconfig(const std::string& yaml_text, const std::filesystem::path& path,
                        const std::string& context_name) {
  Reader r(path);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    r.fail(std::string("invalid YAML: ") + e.what());
  }
  if (!root.IsMap()) r.fail("not a YAML map");

  std::string ctx_name = context_name;
  std::string ctx_ref = "the requested context";
  if (ctx_name.empty()) {
    ctx_name = r.str(root, "current-context", "");
    ctx_ref = "current-context";
    if (ctx_name.empty()) r.fail("current-context is not set and no context was given");
  }
  const YAML::Node ctx = r.named(root, "contexts", "context", ctx_name, ctx_ref);
  const std::string ctx_where = "contexts[name=" + ctx_name + "].context";
  const std::string cluster_name = r.str(ctx, "cluster", ctx_where);
  const std::string user_name = r.str(ctx, "user", ctx_where);
  if (cluster_name.empty()) r.fail(ctx_where + ".cluster is missing");

  Config cfg;
  cfg.origin = "kubeconfig " + path.string() + " (context " + ctx_name + ")";
  const std::string ns = r.str(ctx, "namespace", ctx_where);
  if (!ns.empty()) cfg.default_namespace = ns;

  const YAML::Node cluster =
      r.named(root, "clusters", "cluster", cluster_name, ctx_where + ".cluster");
  const std::string cl_where = "clusters[name=" + cluster_name + "].cluster";
  cfg.server = r.str(cluster, "server", cl_where);
  if (cfg.server.empty()) r.fail(cl_where + ".server is missing");
  while (!cfg.server.empty() && cfg.server.back() == '/') cfg.server.pop_back();
  if (cfg.server.rfind("https://", 0) != 0 && cfg.server.rfind("http://", 0) != 0)
    r.fail(cl_where + ".server must start with https:// or http://, got '" + cfg.server + "'");
  cfg.ca_pem = r.pem(cluster, "certificate-authority", cl_where);
  cfg.insecure_skip_tls_verify = r.flag(cluster, "insecure-skip-tls-verify", cl_where);

  if (!user_name.empty()) {
    const YAML::Node user = r.named(root, "users", "user", user_name, ctx_where + ".user");
    const std::string u_where = "users[name=" + user_name + "].user";
    if (user["auth-provider"])
      r.fail(u_where +
             ": auth-provider credentials are not supported (client-go deprecated them); use an "
             "exec plugin, a token or a client certificate");
    if (const YAML::Node exec = user["exec"]) cfg.exec = r.exec_plugin(exec, u_where + ".exec");
    if (user["username"] || user["password"])
      r.fail(u_where + ": basic authentication (username/password) is not supported");
    cfg.bearer_token = r.str(user, "token", u_where);
    const std::string token_file = r.str(user, "tokenFile", u_where);
    if (!token_file.empty()) cfg.bearer_token_file = r.resolve(token_file);
    cfg.client_cert_pem = r.pem(user, "client-certificate", u_where);
    cfg.client_key_pem = r.pem(user, "client-key", u_where);
    if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty())
      r.fail(u_where + ": client-certificate and client-key must be given together");
  }
  return cfg;
}

Config load_kubeconfig(const std::filesystem::path& path, const std::string& context) {
  std::string text;
  try {
    text = io::read_regular_file(path, kMaxKubeconfigBytes, "kubeconfig");
  } catch (const io::FileError& e) {
    throw ConfigError(std::string("kubeconfig ") + e.what());
  }
  return parse_kubeconfig(text, path, context);
}

Config load_default_config(const std::string& kubeconfig) {
  if (!kubeconfig.empty()) return load_kubeconfig(kubeconfig);
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    // Like kubectl, KUBECONFIG may list several files; we take the first that exists.
    std::string list(env);
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t colon = std::min(list.find(':', start), list.size());
      const std::string entry = list.substr(start, colon - start);
      if (!entry.empty() && std::filesystem::exists(entry)) return load_kubeconfig(entry);
      start = colon + 1;
    }
    throw ConfigError("KUBECONFIG='" + list + "': none of its files exists");
  }
  if (std::getenv("KUBERNETES_SERVICE_HOST")) return in_cluster_config();
  const char* home = std::getenv("HOME");
  const std::filesystem::path fallback = std::filesystem::path(home ? home : "") / ".kube/config";
  if (std::filesystem::exists(fallback)) return load_kubeconfig(fallback);
  throw ConfigError(
      "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, run in a pod, or create " +
      fallback.string());
}

}  // namespace ddp3d::kube
