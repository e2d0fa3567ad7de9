// Act: writes a TrainingJob's status through the status subresource, conflict-checked against
// the resourceVersion the decision was made on.
#pragma once

#include <cpprest/json.h>

#include "operator/api/training_job.h"
#include "operator/kube/client.h"
#include "operator/kube/object_cache.h"

namespace ddp3d::op::act {

struct StatusWrite {
  enum class Outcome {
    kWritten,
    // Someone wrote the job since the cache saw it: the decision may rest on an old status,
    // so nothing of it may be applied; decide again on the newer version.
    kConflict,
    kGone,  // deleted meanwhile
  };
  Outcome outcome = Outcome::kWritten;
  web::json::value sent;    // the body sent (kWritten)
  kube::ObjectPtr written;  // what the server answered (kWritten)
};

// `job`: the object the decision was made on (its resourceVersion is the precondition).
StatusWrite write_status(kube::Client& client, const web::json::value& job,
                         const api::TrainingJobStatus& status);

}  // namespace ddp3d::op::act
