// spec.podSecurity: how much of the pod template the operator lets through (docs/security.md).
#pragma once

#include <optional>
#include <string>

namespace ddp3d::op::api {

enum class PodSecurity {
  // The default: the template may not weaken isolation (template_policy.h lists what is
  // refused) and the operator adds the Pod Security "restricted" settings to every pod.
  kRestricted,
  // The template passes as written; honoured only in the operator's trusted namespaces.
  kTrusted,
};

inline const char* to_string(PodSecurity p) {
  return p == PodSecurity::kTrusted ? "Trusted" : "Restricted";
}

inline std::optional<PodSecurity> parse_pod_security(const std::string& s) {
  if (s == "Restricted") return PodSecurity::kRestricted;
  if (s == "Trusted") return PodSecurity::kTrusted;
  return std::nullopt;
}

}  // namespace ddp3d::op::api
