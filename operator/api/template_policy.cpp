#include "operator/api/template_policy.h"

#include <algorithm>

namespace ddp3d::op::api {

namespace {

using web::json::value;

constexpr const char* kWhy = " (refused under spec.podSecurity Restricted, see docs/security.md)";

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// obj[key] when obj is an object holding a non-null key, else nullptr.
const value* field(const value& obj, const char* key) {
  if (!obj.is_object() || !obj.has_field(key) || obj.at(key).is_null()) return nullptr;
  return &obj.at(key);
}

// Collects violations of one object: each check names its field under `path`.
class Checker {
 public:
  Checker(const value& obj, std::string path, std::vector<FieldError>* errors)
      : obj_(obj), path_(std::move(path)), errors_(errors) {}

  Checker child(const char* key) const {
    static const value kNull;
    const value* v = field(obj_, key);
    return Checker(v ? *v : kNull, path_ + "." + key, errors_);
  }
  const value& obj() const { return obj_; }
  const std::string& path() const { return path_; }

  void refuse(const std::string& key_path, const std::string& message) const {
    errors_->push_back({path_ + key_path, message + kWhy});
  }
  void refuse_bool(const char* key, bool refused, const char* message) const {
    const value* v = field(obj_, key);
    if (!v) return;
    if (!v->is_boolean()) return refuse(std::string(".") + key, "must be a boolean");
    if (v->as_bool() == refused) refuse(std::string(".") + key, message);
  }
  void refuse_string(const char* key, const char* refused, const char* message) const {
    const value* v = field(obj_, key);
    if (v && v->is_string() && v->as_string() == refused) refuse(std::string(".") + key, message);
  }
  void refuse_nonempty_list(const char* key, const char* message) const {
    const value* v = field(obj_, key);
    if (!v) return;
    if (!v->is_array()) return refuse(std::string(".") + key, "must be a list");
    if (v->size() > 0) refuse(std::string(".") + key, message);
  }
  void refuse_root_user() const {
    const value* v = field(obj_, "runAsUser");
    if (v && v->is_number() && v->as_number().is_integral() && v->as_number().to_int64() == 0)
      refuse(".runAsUser", "must not be 0 (root)");
  }
  // Elements of obj[key] when it is a list, each with its indexed path.
  template <typename Fn>
  void each(const char* key, Fn fn) const {
    const value* v = field(obj_, key);
    if (!v || !v->is_array()) return;
    const auto& arr = v->as_array();
    for (size_t i = 0; i < arr.size(); ++i)
      fn(Checker(arr.at(i), path_ + "." + key + "[" + std::to_string(i) + "]", errors_));
  }

 private:
  const value& obj_;
  std::string path_;
  std::vector<FieldError>* errors_;
};

// Settings allowed at both pod and container level (PodSecurityContext / SecurityContext).
void check_common_security_context(const Checker& sc) {
  sc.refuse_root_user();
  sc.refuse_bool("runAsNonRoot", false, "must not be false");
  sc.child("seccompProfile").refuse_string("type", "Unconfined", "must not be Unconfined");
  sc.child("appArmorProfile").refuse_string("type", "Unconfined", "must not be Unconfined");
  sc.child("windowsOptions").refuse_bool("hostProcess", true, "must not be true");
  const Checker se = sc.child("seLinuxOptions");
  for (const char* key : {"user", "role"}) {
    const value* v = field(se.obj(), key);
    if (v && !(v->is_string() && v->as_string().empty()))
      se.refuse(std::string(".") + key, "must not be set");
  }
  const value* type = field(se.obj(), "type");
  static const std::vector<std::string> kTypes = {"", "container_t", "container_init_t",
                                                  "container_kvm_t", "container_engine_t"};
  if (type && !(type->is_string() && contains(kTypes, type->as_string())))
    se.refuse(".type",
              "must be container_t, container_init_t, container_kvm_t or container_engine_t");
}

void check_container(const Checker& c) {
  const Checker sc = c.child("securityContext");
  sc.refuse_bool("privileged", true, "must not be true");
  sc.refuse_bool("allowPrivilegeEscalation", true, "must not be true");
  sc.child("capabilities").refuse_nonempty_list("add", "must be empty: no capability may be added");
  const value* proc_mount = field(sc.obj(), "procMount");
  if (proc_mount && !(proc_mount->is_string() && proc_mount->as_string() == "Default"))
    sc.refuse(".procMount", "must be Default or unset");
  check_common_security_context(sc);
  c.each("ports", [](const Checker& port) {
    const value* v = field(port.obj(), "hostPort");
    if (v && !(v->is_number() && v->as_number().is_integral() && v->as_number().to_int64() == 0))
      port.refuse(".hostPort", "must not be set");
  });
}

bool is_restricted_volume_source(const std::string& key) {
  return std::any_of(std::begin(kRestrictedVolumeSources), std::end(kRestrictedVolumeSources),
                     [&](const char* allowed) { return key == allowed; });
}

void check_volume(const Checker& v) {
  if (!v.obj().is_object()) return;
  for (const auto& [key, source] : v.obj().as_object()) {
    if (key == "name" || source.is_null()) continue;
    if (key == "hostPath") {
      v.refuse(".hostPath", "hostPath volumes are not allowed");
    } else if (!is_restricted_volume_source(key)) {
      v.refuse("." + key, "volume type " + key +
                              " is not allowed (configMap, csi, downwardAPI, emptyDir, ephemeral, "
                              "persistentVolumeClaim, projected, secret are)");
    }
  }
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "\"" : ", \"") + i + "\"";
  return s.empty() ? "none" : s;
}

}  // namespace

std::vector<FieldError> restricted_template_violations(
    const value& pod_template, const std::vector<std::string>& allowed_service_accounts) {
  std::vector<FieldError> errors;
  const value* spec_v = field(pod_template, "spec");
  if (!spec_v || !spec_v->is_object()) return errors;  // validate() reports a non-object spec
  const Checker spec(*spec_v, "spec.template.spec", &errors);
  for (const char* key : {"hostNetwork", "hostPID", "hostIPC"})
    spec.refuse_bool(key, true, "must not be true");
  if (const value* n = field(*spec_v, "nodeName");
      n && !(n->is_string() && n->as_string().empty())) {
    spec.refuse(".nodeName", "must not be set (use nodeSelector or affinity)");
  }
  for (const char* key : {"serviceAccountName", "serviceAccount"}) {
    const value* sa = field(*spec_v, key);
    if (!sa) continue;
    if (!sa->is_string()) {
      spec.refuse(std::string(".") + key, "must be a string");
    } else if (!sa->as_string().empty() && !contains(allowed_service_accounts, sa->as_string())) {
      spec.refuse(std::string(".") + key,
                  "service account \"" + sa->as_string() + "\" is not allowed (allowed: " +
                      quoted_list(allowed_service_accounts) + "; --allowed-service-accounts)");
    }
  }
  const Checker psc = spec.child("securityContext");
  check_common_security_context(psc);
  psc.refuse_nonempty_list("sysctls", "must be empty");
  spec.each("volumes", check_volume);
  spec.each("containers", check_container);
  spec.each("initContainers", check_container);
  spec.each("ephemeralContainers", check_container);
  return errors;
}

std::vector<FieldError> check_template_policy(const TrainingJob& job,
                                              const TemplatePolicy& policy) {
  if (job.spec.pod_security == PodSecurity::kTrusted) {
    if (contains(policy.trusted_namespaces, job.meta.namespace_)) return {};
    std::vector<FieldError> errors = {
        {"spec.podSecurity",
         "Trusted is allowed only in the operator's trusted namespaces "
         "(--trusted-namespaces: " +
             quoted_list(policy.trusted_namespaces) + "), not in \"" + job.meta.namespace_ + "\""}};
    for (auto& e :
         restricted_template_violations(job.spec.pod_template, policy.allowed_service_accounts))
      errors.push_back(std::move(e));
    return errors;
  }
  return restricted_template_violations(job.spec.pod_template, policy.allowed_service_accounts);
}

}  // namespace ddp3d::op::api
