#include "worker/config/consistency.h"

#include <string>

#include "worker/config/component_schemas.h"
#include "worker/config/cross_check.h"
#include "worker/config/schema.h"

namespace ddp3d::config {

namespace {

void check_schedule(CrossCheck& check) {
  const Value* phases = check.at("param_scheduler");
  if (phases != nullptr && phases->is_list()) {
    for (std::size_t i = 0; i < phases->items().size(); ++i) {
      const Value& p = phases->items()[i];
      const Value* begin = p.find("begin");
      const Value* end = p.find("end");
      if (begin != nullptr && end != nullptr && !end->is_null()) {
        check.expect(
            end->as_double() > begin->as_double(), "param_scheduler." + std::to_string(i) + ".end",
            "must be greater than begin (" + begin->describe() + "), got " + end->describe());
      }
    }
  }
}

// A timeout of one interval or less would call a peer lost between two of its beats.
void check_heartbeat(CrossCheck& check) {
  const std::string base = "env_cfg.dist_cfg.heartbeat_";
  const Value* interval = check.at(base + "interval");
  const Value* timeout = check.at(base + "timeout");
  if (interval == nullptr && timeout == nullptr) return;
  const double every = interval != nullptr ? interval->as_double() : 2.0;  // schema defaults
  const double limit = timeout != nullptr ? timeout->as_double() : 20.0;
  if (limit == 0) return;
  check.expect(limit >= 2 * every, base + (timeout != nullptr ? "timeout" : "interval"),
               "heartbeat_timeout (" + format_double(limit) +
                   " s) must be 0 (off) or at least twice heartbeat_interval (" +
                   format_double(every) + " s)");
}

std::string join(const std::string& key, const std::string& child) {
  return key.empty() ? child : key + "." + child;
}

// Walks `v` with its schema and runs the check of every registered component it meets, the
// components inside a node before the node's own.
void check_components(const Schema& s, const Value& v, const std::string& key, CrossCheck& check) {
  if (s.kind() == Schema::Kind::kList && v.is_list()) {
    for (std::size_t i = 0; i < v.items().size(); ++i) {
      check_components(*s.element(), v.items()[i], join(key, std::to_string(i)), check);
    }
    return;
  }
  if (s.kind() != Schema::Kind::kMap || !v.is_map()) return;
  std::vector<const Field*> fields;
  for (const Field& f : s.fields()) fields.push_back(&f);
  const Value* tag = s.discriminator().empty() ? nullptr : v.find(s.discriminator());
  const std::string type = tag != nullptr ? tag->as_string() : "";
  for (const auto& [variant, variant_fields] : s.variant_fields()) {
    if (variant != type) continue;
    for (const Field& f : variant_fields) fields.push_back(&f);
  }
  for (const Field* f : fields) {
    if (const Value* child = v.find(f->first)) {
      check_components(f->second, *child, join(key, f->first), check);
    }
  }
  if (s.component_kind().empty()) return;
  if (const ComponentCheck* c = component_schemas().check(s.component_kind(), type)) {
    (*c)(check, key);
  }
}

}  // namespace

void check_consistency(const Value& root, std::vector<Issue>& issues) {
  CrossCheck check(root, issues);
  check_components(ddp3d_schema(), root, "", check);
  check_schedule(check);
  check_heartbeat(check);
}

}  // namespace ddp3d::config
