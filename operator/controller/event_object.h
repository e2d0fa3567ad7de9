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

}  // namespace ddp3d::op::controller
