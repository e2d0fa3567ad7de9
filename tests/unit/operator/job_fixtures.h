// Builders for TrainingJobs and observed pods shared by the operator unit tests.
#pragma once

#include <cpprest/json.h>

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "operator/api/timestamps.h"
#include "operator/api/training_job.h"
#include "operator/controller/observed.h"
#include "operator/controller/reconcile.h"

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

// One pod per rank of `job` in `attempt`, all in `phase`.
Pods gang_pods(const api::TrainingJob& job, int attempt, const std::string& phase);

// What the observer reports for `job`: these pods and the job's headless Service.
controller::Observed observed_with_service(const api::TrainingJob& job, Pods pods);

web::json::value parse(const std::string& text);

// The actions of one kind in `r`, in order.
template <class Kind>
std::vector<const Kind*> all(const controller::ReconcileResult& r) {
  std::vector<const Kind*> out;
  for (const auto& a : r.actions) {
    if (const auto* k = std::get_if<Kind>(&a)) out.push_back(k);
  }
  return out;
}

template <class Kind>
int count(const controller::ReconcileResult& r) {
  return static_cast<int>(all<Kind>(r).size());
}

// Index in r.actions of the first action of that kind, -1 if none.
template <class Kind>
int first_index(const controller::ReconcileResult& r) {
  for (std::size_t i = 0; i < r.actions.size(); ++i) {
    if (std::holds_alternative<Kind>(r.actions[i])) return static_cast<int>(i);
  }
  return -1;
}

// The name in a created object's metadata.
std::string name_of(const web::json::value& object);

}  // namespace ddp3d::op::testing
