#include "operator/api/validation.h"

#include <algorithm>
#include <utility>

#include "operator/api/env_contract.h"
#include "operator/api/names.h"

namespace ddp3d::op::api {

namespace {

using web::json::value;

std::string idx(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

void check_env_list(const value& env, const std::string& path, std::vector<FieldError>* errors) {
  if (env.is_null()) return;
  if (!env.is_array()) {
    errors->push_back({path, "must be a list of EnvVar objects"});
    return;
  }
  const auto& arr = env.as_array();
  for (size_t i = 0; i < arr.size(); ++i) {
    const value& e = arr.at(i);
    const std::string p = idx(path, i);
    if (!e.is_object() || !e.has_field("name") || !e.at("name").is_string() ||
        e.at("name").as_string().empty()) {
      errors->push_back({p + ".name", "required"});
      continue;
    }
    const std::string name = e.at("name").as_string();
    if (is_reserved_env(name)) {
      errors->push_back({p + ".name", "\"" + name +
                                          "\" is reserved: the operator or the launcher sets it "
                                          "(see the environment contract)"});
    }
  }
}

// Returns the template's first container's image, or "" if it has none.
std::string check_template(const value& tpl, std::vector<FieldError>* errors) {
  if (!tpl.is_object() || !tpl.has_field("spec") || tpl.at("spec").is_null()) return "";
  const value& spec = tpl.at("spec");
  if (!spec.is_object()) {
    errors->push_back({"spec.template.spec", "must be an object"});
    return "";
  }
  if (!spec.has_field("containers") || spec.at("containers").is_null()) return "";
  if (!spec.at("containers").is_array()) {
    errors->push_back({"spec.template.spec.containers", "must be a list"});
    return "";
  }
  std::string image;
  const auto& containers = spec.at("containers").as_array();
  for (size_t i = 0; i < containers.size(); ++i) {
    const value& c = containers.at(i);
    const std::string p = idx("spec.template.spec.containers", i);
    if (!c.is_object()) {
      errors->push_back({p, "must be an object"});
      continue;
    }
    if (c.has_field("env")) check_env_list(c.at("env"), p + ".env", errors);
    if (i == 0 && c.has_field("image") && c.at("image").is_string())
      image = c.at("image").as_string();
  }
  return image;
}

}  // namespace

std::vector<FieldError> validate(const TrainingJob& job) {
  std::vector<FieldError> errors;
  const auto& s = job.spec;
  if (job.meta.name.empty()) errors.push_back({"metadata.name", "required"});
  if (s.nnodes < 1 || s.nnodes > kMaxNodes) {
    errors.push_back({"spec.nnodes", "must be between 1 and " + std::to_string(kMaxNodes) +
                                         ", got " + std::to_string(s.nnodes)});
  }
  if (s.gpus_per_node < 0 || s.gpus_per_node > kMaxGpusPerNode) {
    errors.push_back({"spec.gpusPerNode", "must be between 0 and " +
                                              std::to_string(kMaxGpusPerNode) + ", got " +
                                              std::to_string(s.gpus_per_node)});
  }
  if (s.port < 1 || s.port > 65535) {
    errors.push_back({"spec.port", "must be between 1 and 65535, got " + std::to_string(s.port)});
  }
  // The workers' metrics ports live in the same network namespace as the rendezvous port.
  const int metrics_last = s.metrics_port + std::max(s.gpus_per_node, 1) - 1;
  if (s.metrics_port < 1 || metrics_last > 65535) {
    errors.push_back({"spec.metricsPort",
                      "must be between 1 and " +
                          std::to_string(65535 - std::max(s.gpus_per_node, 1) + 1) +
                          " (one port per local rank), got " + std::to_string(s.metrics_port)});
  } else if (s.port >= s.metrics_port && s.port <= metrics_last) {
    errors.push_back({"spec.port", std::to_string(s.port) + " is taken by the workers' metrics " +
                                       "ports " + std::to_string(s.metrics_port) + "-" +
                                       std::to_string(metrics_last) +
                                       " (spec.metricsPort, DDP3D_METRICS_PORT)"});
  }
  if (s.config.empty()) errors.push_back({"spec.config", "required (path of the training config)"});
  const auto& rp = s.run_policy;
  if (rp.backoff_limit < 0) {
    errors.push_back(
        {"spec.runPolicy.backoffLimit", "must be >= 0, got " + std::to_string(rp.backoff_limit)});
  }
  // disruptionLimit
  if (rp.disruption_limit < 0 || rp.disruption_limit > kMaxDisruptionLimit) {
    errors.push_back({"spec.runPolicy.disruptionLimit",
                      "must be between 0 and " + std::to_string(kMaxDisruptionLimit) + ", got " +
                          std::to_string(rp.disruption_limit)});
  }
  if (rp.active_deadline_seconds && *rp.active_deadline_seconds <= 0) {
    errors.push_back({"spec.runPolicy.activeDeadlineSeconds", "must be > 0"});
  }
  // startupDeadlineSeconds, progressDeadlineSeconds
  for (const auto& [field, limit] :
       {std::pair{"spec.runPolicy.startupDeadlineSeconds", rp.startup_deadline_seconds},
        std::pair{"spec.runPolicy.progressDeadlineSeconds", rp.progress_deadline_seconds}}) {
    if (limit && (*limit < 1 || *limit > kMaxRunPolicyDeadlineSeconds)) {
      errors.push_back({field, "must be between 1 and " +
                                   std::to_string(kMaxRunPolicyDeadlineSeconds) + ", got " +
                                   std::to_string(*limit)});
    }
  }
  if (rp.node_loss_timeout_seconds < 0 ||
      rp.node_loss_timeout_seconds > kMaxRunPolicyDeadlineSeconds) {
    errors.push_back({"spec.runPolicy.nodeLossTimeoutSeconds",
                      "must be between 0 and " + std::to_string(kMaxRunPolicyDeadlineSeconds) +
                          ", got " + std::to_string(rp.node_loss_timeout_seconds)});
  }
  if (rp.ttl_seconds_after_finished && *rp.ttl_seconds_after_finished < 0) {
    errors.push_back({"spec.runPolicy.ttlSecondsAfterFinished", "must be >= 0"});
  }
  if (const auto& e = s.elastic) {
    if (e->min_nodes < 1 || e->min_nodes > s.nnodes) {
      errors.push_back({"spec.elastic.minNodes", "must be between 1 and spec.nnodes (" +
                                                     std::to_string(s.nnodes) + "), got " +
                                                     std::to_string(e->min_nodes)});
    }
    for (const auto& [field, seconds] :
         {std::pair{"spec.elastic.placementTimeoutSeconds", e->placement_timeout_seconds},
          std::pair{"spec.elastic.growIntervalSeconds", e->grow_interval_seconds}}) {
      if (seconds < 1 || seconds > kMaxRunPolicyDeadlineSeconds) {
        errors.push_back({field, "must be between 1 and " +
                                     std::to_string(kMaxRunPolicyDeadlineSeconds) + ", got " +
                                     std::to_string(seconds)});
      }
    }
  }
  // spec.network (docs/security.md, "Network")
  const auto& metrics_ns = s.network.metrics_namespaces;
  if (metrics_ns.size() > kMaxMetricsNamespaces) {
    errors.push_back({"spec.network.metricsNamespaces",
                      "must have at most " + std::to_string(kMaxMetricsNamespaces) +
                          " items, got " + std::to_string(metrics_ns.size())});
  } else {
    for (size_t i = 0; i < metrics_ns.size(); ++i) {
      if (!is_dns1123_label(metrics_ns[i])) {
        errors.push_back({idx("spec.network.metricsNamespaces", i),
                          "must be a namespace name (DNS-1123 label)"});
      }
    }
  }
  value env = value::array();
  for (size_t i = 0; i < s.env.size(); ++i) env[i] = s.env[i];
  check_env_list(env, "spec.env", &errors);
  const std::string template_image = check_template(s.pod_template, &errors);
  if (s.image.empty() && template_image.empty()) {
    errors.push_back({"spec.image", "required (or spec.template.spec.containers[0].image)"});
  }
  return errors;
}

}  // namespace ddp3d::op::api
