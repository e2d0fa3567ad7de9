#include "operator/kube/exec_credential.h"

#include <cpprest/asyncrt_utils.h>
#include <cpprest/json.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "operator/kube/errors.h"
#include "operator/kube/lease.h"

extern char** environ;

namespace ddp3d::kube {

using web::json::value;

namespace {

constexpr auto kRefreshBefore = std::chrono::seconds(10);
constexpr int kPluginTimeoutMs = 60'000;
constexpr std::size_t kStderrKept = 2000;

std::string plugin_name(const ExecPlugin& p) {
  return "exec credential plugin '" + p.command + "'";
}

}  // namespace

ExecCredentialToken parse_exec_credential(const std::string& json_text, const ExecPlugin& plugin) {
  const std::string who = plugin_name(plugin);
  value doc;
  try {
    doc = value::parse(json_text);
  } catch (const std::exception& e) {
    throw ConfigError(who + " did not print JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.has_string_field("kind") ||
      doc.at("kind").as_string() != "ExecCredential") {
    throw ConfigError(who + " printed something other than an ExecCredential (kind)");
  }
  if (!doc.has_string_field("apiVersion") ||
      doc.at("apiVersion").as_string() != plugin.api_version) {
    throw ConfigError(
        who + " answered apiVersion '" +
        (doc.has_string_field("apiVersion") ? doc.at("apiVersion").as_string() : std::string()) +
        "' but the kubeconfig asks for '" + plugin.api_version + "'");
  }
  const value status = doc.has_object_field("status") ? doc.at("status") : value::object();
  if (!status.has_string_field("token") || status.at("token").as_string().empty()) {
    if (status.has_field("clientCertificateData")) {
      throw ConfigError(who + " returned a client certificate; only status.token is supported");
    }
    throw ConfigError(who + " returned no status.token");
  }
  ExecCredentialToken out;
  out.token = status.at("token").as_string();
  if (status.has_string_field("expirationTimestamp")) {
    try {
      out.expires = parse_micro_time(status.at("expirationTimestamp").as_string());
    } catch (const std::invalid_argument& e) {
      throw ConfigError(who + ": status.expirationTimestamp: " + e.what());
    }
  }
  return out;
}

std::string exec_info_json(const ExecPlugin& plugin, const std::string& server,
                           const std::string& ca_pem) {
  value info = value::object();
  info["apiVersion"] = value::string(plugin.api_version);
  info["kind"] = value::string("ExecCredential");
  value spec = value::object();
  spec["interactive"] = value::boolean(false);
  if (plugin.provide_cluster_info) {
    value cluster = value::object();
    cluster["server"] = value::string(server);
    if (!ca_pem.empty()) {
      const std::vector<unsigned char> bytes(ca_pem.begin(), ca_pem.end());
      cluster["certificate-authority-data"] = value::string(utility::conversions::to_base64(bytes));
    }
    spec["cluster"] = cluster;
  }
  info["spec"] = spec;
  return info.serialize();
}

ExecCredentialSource::ExecCredentialSource(ExecPlugin plugin, std::string server,
                                           std::string ca_pem)
    : plugin_(std::move(plugin)), server_(std::move(server)), ca_pem_(std::move(ca_pem)) {}

std::string ExecCredentialSource::token() {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::system_clock::now();
  if (cached_ && (!cached_->expires || *cached_->expires - kRefreshBefore > now)) {
    return cached_->token;
  }
  cached_ = parse_exec_credential(run_plugin(), plugin_);
  return cached_->token;
}

std::string ExecCredentialSource::run_plugin() const {
  const std::string who = plugin_name(plugin_);
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::vector<std::string> arg_strings{plugin_.command};
  arg_strings.insert(arg_strings.end(), plugin_.args.begin(), plugin_.args.end());
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& [k, v] : plugin_.env) env_strings.push_back(k + "=" + v);
  env_strings.push_back("KUBERNETES_EXEC_INFO=" + exec_info_json(plugin_, server_, ca_pem_));
  std::vector<char*> argv, envp;
  for (auto& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::array<int, 2> out{}, err{};
  if (pipe2(out.data(), O_CLOEXEC) != 0 || pipe2(err.data(), O_CLOEXEC) != 0) {
    throw ConfigError(who + ": cannot create pipes: " + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) throw ConfigError(who + ": fork failed: " + std::strerror(errno));
  if (pid == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execvpe(argv[0], argv.data(), envp.data());
    const char msg[] = "cannot execute the plugin\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  std::string stdout_text, stderr_text;
  std::array<pollfd, 2> fds{pollfd{out[0], POLLIN, 0}, pollfd{err[0], POLLIN, 0}};
  bool timed_out = false;
  int open_fds = 2;
  while (open_fds > 0) {
    const int ready = poll(fds.data(), fds.size(), kPluginTimeoutMs);
    if (ready == 0) {
      timed_out = true;
      break;
    }
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      std::array<char, 4096> buf{};
      const ssize_t n = read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        (i == 0 ? stdout_text : stderr_text).append(buf.data(), static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (stderr_text.size() > kStderrKept)
    stderr_text = "..." + stderr_text.substr(stderr_text.size() - kStderrKept);
  if (timed_out) throw ConfigError(who + " did not finish within 60 s");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status)
                                ? "exited with code " + std::to_string(WEXITSTATUS(status))
                                : "was killed by signal " + std::to_string(WTERMSIG(status));
    throw ConfigError(who + " " + how + (stderr_text.empty() ? "" : ": " + stderr_text));
  }
  return stdout_text;
}

}  // namespace ddp3d::kube
