#include "operator/controller/observed.h"

#include <charconv>

#include "operator/api/names.h"
#include "operator/api/timestamps.h"

namespace ddp3d::op::controller {

using web::json::value;

namespace {

const value* field(const value& v, const char* key) {
  if (!v.is_object() || !v.has_field(key)) return nullptr;
  const value& f = v.at(key);
  return f.is_null() ? nullptr : &f;
}

std::string string_field(const value& v, const char* key) {
  const value* f = field(v, key);
  return f && f->is_string() ? f->as_string() : "";
}

int int_label(const value& meta, const char* key) {
  const value* labels = field(meta, "labels");
  if (!labels) return -1;
  const std::string s = string_field(*labels, key);
  int out = -1;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || out < 0) return -1;
  return out;
}

}  // namespace

ObservedPod observe_pod(const value& pod) {
  ObservedPod o;
  static const value kEmpty = value::object();
  const value* meta = field(pod, "metadata");
  const value& m = meta ? *meta : kEmpty;
  o.name = string_field(m, "name");
  o.uid = string_field(m, "uid");
  o.deleting = field(m, "deletionTimestamp") != nullptr;
  o.rank = int_label(m, api::kLabelNodeRank);
  o.attempt = int_label(m, api::kLabelAttempt);
  const value* status = field(pod, "status");
  if (!status) return o;
  o.phase = string_field(*status, "phase");
  o.reason = string_field(*status, "reason");
  o.pod_reason = o.reason;
  if (const value* conditions = field(*status, "conditions");
      conditions && conditions->is_array()) {
    for (const auto& c : conditions->as_array()) {
      if (string_field(c, "type") != "DisruptionTarget" || string_field(c, "status") != "True") {
        continue;
      }
      const std::string why = string_field(c, "reason");
      o.disruption_target = why.empty() ? "DisruptionTarget" : why;
    }
  }
  const value* statuses = field(*status, "containerStatuses");
  if (!statuses || !statuses->is_array()) return o;
  for (const auto& cs : statuses->as_array()) {
    const value* state = field(cs, "state");
    const value* terminated = state ? field(*state, "terminated") : nullptr;
    if (!terminated) continue;
    const value* code = field(*terminated, "exitCode");
    if (!code || !code->is_integer()) continue;
    const int c = code->as_integer();
    // A non-zero code explains the failure better than a sibling container's clean exit.
    if (!o.exit_code || (*o.exit_code == 0 && c != 0)) {
      o.exit_code = c;
      o.finished_at = api::parse_rfc3339(string_field(*terminated, "finishedAt"));
      if (o.reason.empty() || c != 0) {
        const std::string r = string_field(*terminated, "reason");
        if (!r.empty()) o.reason = r;
      }
    }
  }
  return o;
}

ObservedService observe_service(const value& service) {
  ObservedService o;
  if (const value* meta = field(service, "metadata")) {
    o.name = string_field(*meta, "name");
    o.uid = string_field(*meta, "uid");
  }
  return o;
}

}  // namespace ddp3d::op::controller
