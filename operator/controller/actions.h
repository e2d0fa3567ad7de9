// What reconcile asks the API client to do. Applying them is the caller's job (I/O); every
// action is idempotent so replaying it after a crash or a lost response is harmless.
#pragma once

#include <cpprest/json.h>

#include <string>

namespace ddp3d::op::controller {

struct Action {
  enum class Kind {
    kCreateService,        // object: the Service; AlreadyExists counts as success
    kCreatePod,            // object: the Pod; AlreadyExists counts as success
    kCreateNetworkPolicy,  // object: the NetworkPolicy; AlreadyExists counts as success
    // object: an attempt's Secret without its token, which the caller adds (randomness is
    // I/O); AlreadyExists counts as success (the pods of the attempt already use that one).
    kCreateRendezvousSecret,
    // object: an attempt's PodGroup; AlreadyExists counts as success.
    kCreatePodGroup,
    // name + uid (delete precondition, so a newer pod of that name survives); with `force`,
    // gracePeriodSeconds 0: the pod's node is lost and no kubelet will confirm the deletion.
    kDeletePod,
    kDeleteJob,  // name + uid: TTL after finish expired
    kEvent,      // event_type (Normal|Warning), reason, message about the TrainingJob
  };
  Kind kind;
  std::string name;
  std::string uid;
  web::json::value object;
  std::string event_type;
  std::string reason;
  std::string message;
  bool force = false;
};

const char* to_string(Action::Kind kind);

}  // namespace ddp3d::op::controller
