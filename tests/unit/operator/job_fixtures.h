// Builders for TrainingJobs and observed pods shared by the operator unit tests.
#pragma once

#include <cpprest/json.h>

#include <optional>
#include <string>
#include <vector>

#include "operator/api/timestamps.h"
#include "operator/api/training_job.h"
#include "operator/controller/observed.h"

namespace ddp3d::op::testing {

// The reconcile tests' "now": 2026-11-30T10:13:29Z.
inline constexpr api::UnixSeconds kT0 = 1796033609;
using Pods = std::vector<controller::ObservedPod>;

// A minimal valid TrainingJob object as the API server would return it.
web::json::value job_json(const std::string& name = "pp", int nnodes = 2, int gpus = 8);
api::TrainingJob job(const std::string& name = "pp", int nnodes = 2, int gpus = 8);

// A pod of `job` for `rank` in `attempt` with the given phase (and terminated exit code).
controller::ObservedPod pod(const api::TrainingJob& job, int rank, int attempt,
                            const std::string& phase, std::optional<int> exit_code = std::nullopt);

web::json::value parse(const std::string& text);

}  // namespace ddp3d::op::testing
