// The Pod Security "restricted" settings the operator writes into every Restricted pod
// (docs/security.md), so a namespace enforcing that profile admits our pods without the user
// spelling them out. The template cannot weaken them: api::restricted_template_violations
// refuses the values that would conflict before any pod is built.
#pragma once

#include <cpprest/json.h>

#include "operator/api/pod_security.h"

namespace ddp3d::op::controller {

// Edits a pod's spec in place. Restricted: runAsNonRoot and seccomp RuntimeDefault (unless the
// template names a Localhost profile) for the pod; allowPrivilegeEscalation false and
// capabilities drop ALL for every container and init container. Both profiles: no service
// account token unless the template sets automountServiceAccountToken itself.
void apply_pod_security_defaults(api::PodSecurity profile, web::json::value& pod_spec);

}  // namespace ddp3d::op::controller
