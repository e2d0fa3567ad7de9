// The closed pod template (docs/security.md): what a TrainingJob's spec.template may not ask
// for. The CRD's CEL rules refuse most of it at admission; this is the complete policy, run by
// the reconciler, which alone knows the operator's configuration (trusted namespaces, allowed
// service accounts) and which must hold even where the CRD was installed without its rules.
#pragma once

#include <cpprest/json.h>

#include <string>
#include <vector>

#include "operator/api/field_error.h"
#include "operator/api/template_policy_options.h"
#include "operator/api/training_job.h"

namespace ddp3d::op::api {

// Volume sources a Restricted template may use: those Pod Security "restricted" allows.
inline constexpr const char* kRestrictedVolumeSources[] = {
    "configMap", "csi",   "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret"};

// Every field of a PodTemplateSpec that the Restricted profile refuses, each named by its full
// path ("spec.template.spec.containers[0].securityContext.privileged"). Pure.
std::vector<FieldError> restricted_template_violations(
    const web::json::value& pod_template, const std::vector<std::string>& allowed_service_accounts);

// The policy applied to one job: Trusted only in a trusted namespace, else the Restricted
// checks above.
std::vector<FieldError> check_template_policy(const TrainingJob& job, const TemplatePolicy& policy);

}  // namespace ddp3d::op::api
