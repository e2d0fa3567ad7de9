#include "operator/act/status_writer.h"

#include <memory>

#include "operator/kube/errors.h"
#include "operator/kube/resource.h"

namespace ddp3d::op::act {

StatusWrite write_status(kube::Client& client, const web::json::value& job,
                         const api::TrainingJobStatus& status) {
  StatusWrite out;
  out.sent = job;
  out.sent["status"] = api::status_to_json(status);
  try {
    out.written = std::make_shared<const web::json::value>(client.replace_status(
        kube::resources::training_jobs(), kube::meta_namespace(job), out.sent));
  } catch (const kube::ConflictError&) {
    out.outcome = StatusWrite::Outcome::kConflict;
  } catch (const kube::NotFoundError&) {
    out.outcome = StatusWrite::Outcome::kGone;
  }
  return out;
}

}  // namespace ddp3d::op::act
