// The core/v1 Event the operator records about a TrainingJob (kubectl describe tj shows them).
#pragma once

#include <cpprest/json.h>

#include <cstdint>
#include <string>

#include "operator/api/training_job.h"

namespace ddp3d::op::controller {

inline constexpr const char* kComponent = "ddp3d-operator";

// `now_ns`: nanoseconds since the epoch; it makes the name unique ("<job>.<hex ns>", the
// scheme kubectl's recorder uses) and gives the timestamps. `instance`: this replica's id.
web::json::value event_object(const api::ObjectMeta& job, const std::string& type,
                              const std::string& reason, const std::string& message, int64_t now_ns,
                              const std::string& instance);

// The message an Event carries: cut short enough for any event consumer (ours are a line or
// two). Repeats are matched on it (controller/event_aggregation.h).
std::string event_message(const std::string& message);

// The merge patch that makes an Event say it happened `count` times, the last at `now_ns`.
web::json::value event_repeat_patch(int32_t count, int64_t now_ns);

}  // namespace ddp3d::op::controller
