#include "operator/controller/pod_security_defaults.h"

namespace ddp3d::op::controller {

namespace {

using web::json::value;

value& object_field(value& obj, const char* key) {
  if (!obj.has_field(key) || !obj.at(key).is_object()) obj[key] = value::object();
  return obj[key];
}

void restrict_container(value& container) {
  if (!container.is_object()) return;
  value& sc = object_field(container, "securityContext");
  sc["allowPrivilegeEscalation"] = value::boolean(false);
  value& caps = object_field(sc, "capabilities");
  if (!caps.has_field("drop") || !caps.at("drop").is_array()) caps["drop"] = value::array();
  value& drop = caps["drop"];
  for (const auto& d : drop.as_array()) {
    if (d.is_string() && d.as_string() == "ALL") return;
  }
  drop[drop.size()] = value::string("ALL");
}

}  // namespace

void apply_pod_security_defaults(api::PodSecurity profile, value& pod_spec) {
  // The workers talk to no API server; a token would only be something to steal.
  if (!pod_spec.has_field("automountServiceAccountToken"))
    pod_spec["automountServiceAccountToken"] = value::boolean(false);
  if (profile != api::PodSecurity::kRestricted) return;
  value& psc = object_field(pod_spec, "securityContext");
  psc["runAsNonRoot"] = value::boolean(true);
  value& seccomp = object_field(psc, "seccompProfile");
  const bool localhost = seccomp.has_field("type") && seccomp.at("type").is_string() &&
                         seccomp.at("type").as_string() == "Localhost";
  if (!localhost) {
    seccomp = value::object();
    seccomp["type"] = value::string("RuntimeDefault");
  }
  for (const char* list : {"containers", "initContainers"}) {
    if (!pod_spec.has_field(list) || !pod_spec.at(list).is_array()) continue;
    value& containers = pod_spec[list];
    for (size_t i = 0; i < containers.size(); ++i) restrict_container(containers[i]);
  }
}

}  // namespace ddp3d::op::controller
