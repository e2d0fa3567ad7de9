// The operator's configuration of the closed pod template (docs/security.md); apart from
// template_policy.h so that flag parsing needs no JSON headers.
#pragma once

#include <string>
#include <vector>

namespace ddp3d::op::api {

struct TemplatePolicy {
  // Namespaces whose jobs may set spec.podSecurity: Trusted (--trusted-namespaces).
  std::vector<std::string> trusted_namespaces;
  // Service accounts a Restricted template may name (--allowed-service-accounts).
  std::vector<std::string> allowed_service_accounts{"default"};
};

}  // namespace ddp3d::op::api
