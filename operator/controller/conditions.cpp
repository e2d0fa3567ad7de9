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

namespace {

// Updates the condition of `type` in place; false when there is none.
bool update_condition(std::vector<api::Condition>* conditions, const std::string& type,
                      const std::string& status, const std::string& reason,
                      const std::string& message, const std::string& now) {
  for (auto& c : *conditions) {
    if (c.type != type) continue;
    if (c.status != status || c.last_transition_time.empty()) c.last_transition_time = now;
    c.status = status;
    c.reason = reason;
    c.message = bounded_message(message);
    return true;
  }
  return false;
}

std::string reason_or_unspecified(const std::string& reason) {
  return reason.empty() ? kReasonUnspecified : reason;
}

}  // namespace

void set_condition(std::vector<api::Condition>* conditions, const std::string& type, bool status,
                   const std::string& reason, const std::string& message, const std::string& now) {
  const std::string s = status ? kStatusTrue : kStatusFalse;
  const std::string why = reason_or_unspecified(reason);
  if (update_condition(conditions, type, s, why, message, now) || !status) return;
  conditions->push_back({type, s, why, bounded_message(message), now});
}

void set_unknown(std::vector<api::Condition>* conditions, const std::string& type,
                 const std::string& reason, const std::string& message, const std::string& now) {
  const std::string why = reason_or_unspecified(reason);
  if (update_condition(conditions, type, kStatusUnknown, why, message, now)) return;
  conditions->push_back({type, kStatusUnknown, why, bounded_message(message), now});
}

void report_condition(std::vector<api::Condition>* conditions, const std::string& type, bool status,
                      const std::string& reason, const std::string& message,
                      const std::string& now) {
  if (!find_condition(*conditions, type)) {
    conditions->push_back({type, status ? kStatusTrue : kStatusFalse, reason_or_unspecified(reason),
                           bounded_message(message), now});
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
