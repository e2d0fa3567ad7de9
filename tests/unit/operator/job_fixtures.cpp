#include "job_fixtures.h"

#include "operator/api/names.h"

namespace ddp3d::op::testing {

web::json::value parse(const std::string& text) {
  return web::json::value::parse(text);
}

web::json::value job_json(const std::string& name, int nnodes, int gpus) {
  auto v = parse(R"({
    "apiVersion": "ddp3d.io/v1alpha1", "kind": "TrainingJob",
    "metadata": {"name": "", "namespace": "ml", "uid": "uid-1", "generation": 1},
    "spec": {"port": 29500, "config": "configs/pointpillars/pp.yaml",
             "args": ["--work-dir", "/data/work"], "image": "ddp3d/worker:1"}
  })");
  v["metadata"]["name"] = web::json::value::string(name);
  v["spec"]["nnodes"] = web::json::value::number(nnodes);
  v["spec"]["gpusPerNode"] = web::json::value::number(gpus);
  return v;
}

api::TrainingJob job(const std::string& name, int nnodes, int gpus) {
  return api::parse_training_job(job_json(name, nnodes, gpus)).job;
}

controller::ObservedPod pod(const api::TrainingJob& job, int rank, int attempt,
                            const std::string& phase, std::optional<int> exit_code) {
  controller::ObservedPod p;
  p.name = api::pod_name(job.meta.name, rank);
  p.uid = p.name + "-a" + std::to_string(attempt);
  p.rank = rank;
  p.attempt = attempt;
  p.phase = phase;
  p.exit_code = exit_code;
  return p;
}

Pods gang_pods(const api::TrainingJob& job, int attempt, const std::string& phase) {
  Pods out;
  for (int r = 0; r < job.spec.nnodes; ++r) out.push_back(pod(job, r, attempt, phase));
  return out;
}

controller::Observed observed_with_service(const api::TrainingJob& job, Pods pods) {
  controller::Observed o;
  o.pods = std::move(pods);
  o.services.push_back({api::service_name(job.meta.name), "svc-uid"});
  return o;
}

std::string name_of(const web::json::value& object) {
  return object.at("metadata").at("name").as_string();
}

}  // namespace ddp3d::op::testing
