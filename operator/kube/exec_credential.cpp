#include "operator/kube/exec_credential.h"

#include <cpprest/asyncrt_utils.h>
#include <cpprest/json.h>

#include <system_error>
#include <utility>
#include <vector>

#include "operator/kube/bounded_process.h"
#include "operator/kube/errors.h"
#include "operator/kube/lease.h"
#include "operator/kube/request_deadline.h"

namespace ddp3d::kube {

using web::json::value;

namespace {

constexpr auto kRefreshBefore = std::chrono::seconds(10);
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
                                           std::string ca_pem, ExecLimits limits)
    : plugin_(std::move(plugin)),
      server_(std::move(server)),
      ca_pem_(std::move(ca_pem)),
      limits_(limits) {}

std::string ExecCredentialSource::token() {
  std::lock_guard lock(mu_);
  if (cancelled_.stop_requested())
    throw ConfigError(plugin_name(plugin_) + ": not run, the client was shut off");
  const auto now = std::chrono::system_clock::now();
  if (cached_ && (!cached_->expires || *cached_->expires - kRefreshBefore > now)) {
    return cached_->token;
  }
  cached_ = parse_exec_credential(run_plugin(), plugin_);
  return cached_->token;
}

void ExecCredentialSource::invalidate() {
  std::lock_guard lock(mu_);
  cached_.reset();
}

void ExecCredentialSource::cancel() {
  cancelled_.request_stop();
}

std::string ExecCredentialSource::run_plugin() const {
  const std::string who = plugin_name(plugin_);
  std::vector<std::string> argv{plugin_.command};
  argv.insert(argv.end(), plugin_.args.begin(), plugin_.args.end());
  auto overrides = plugin_.env;
  overrides.emplace_back("KUBERNETES_EXEC_INFO", exec_info_json(plugin_, server_, ca_pem_));
  ProcessLimits limits;
  limits.deadline = request_deadline(limits_.timeout);
  limits.max_stdout_bytes = limits_.max_output_bytes;
  limits.stderr_tail_bytes = kStderrKept;
  limits.stop = cancelled_.get_token();
  ProcessResult r;
  try {
    r = run_bounded(argv, environment_with(overrides), limits);
  } catch (const std::system_error& e) {
    throw ConfigError(who + ": cannot run it: " + e.what());
  }
  const std::string stderr_note = r.stderr_tail.empty() ? "" : ": " + r.stderr_tail;
  switch (r.outcome) {
    case ProcessResult::Outcome::kTimedOut:
      throw ConfigError(who + " did not finish within " + std::to_string(limits_.timeout.count()) +
                        " ms (or the request's deadline); its process group was killed" +
                        stderr_note);
    case ProcessResult::Outcome::kStdoutTooLarge:
      throw ConfigError(who + " printed more than " + std::to_string(limits_.max_output_bytes) +
                        " bytes; its process group was killed");
    case ProcessResult::Outcome::kCancelled:
      throw ConfigError(who +
                        " was stopped, the client was shut off; its process group was killed");
    case ProcessResult::Outcome::kExited:
      break;
  }
  if (r.signal != 0)
    throw ConfigError(who + " was killed by signal " + std::to_string(r.signal) + stderr_note);
  if (r.exit_code != 0)
    throw ConfigError(who + " exited with code " + std::to_string(r.exit_code) + stderr_note);
  return r.stdout_text;
}

}  // namespace ddp3d::kube
