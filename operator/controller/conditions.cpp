#include "operator/controller/conditions.h"

namespace ddp3d::op::controller {

std::string bounded_message(const std::string& message) {
  constexpr std::size_t kMax = 32768;
  if (message.size() <= kMax) return message;
  const std::string tail = " ... (cut)";
  std::size_t end = kMax - tail.size();
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  return message.substr(0, end) + tail;
}

void set_condition(std::vector<api::Condition>* conditions, const std::string& type, bool status,
                   const std::string& reason, const std::string& message, const std::string& now) {
  const std::string s = status ? "True" : "False";
  const std::string why = reason.empty() ? kReasonUnspecified : reason;
  for (auto& c : *conditions) {
    if (c.type != type) continue;
    if (c.status != s) c.last_transition_time = now;
    c.status = s;
    c.reason = why;
    c.message = bounded_message(message);
    if (c.last_transition_time.empty()) c.last_transition_time = now;
    return;
  }
  if (!status) return;
  conditions->push_back({type, s, why, bounded_message(message), now});
}

void report_condition(std::vector<api::Condition>* conditions, const std::string& type, bool status,
                      const std::string& reason, const std::string& message,
                      const std::string& now) {
  if (!find_condition(*conditions, type)) {
    conditions->push_back({type, status ? "True" : "False",
                           reason.empty() ? kReasonUnspecified : reason, bounded_message(message),
                           now});
    return;
  }
  set_condition(conditions, type, status, reason, message, now);
}

const api::Condition* find_condition(const std::vector<api::Condition>& conditions,
                                     const std::string& type) {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace ddp3d::op::controller
