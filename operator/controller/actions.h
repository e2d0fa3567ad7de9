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
    kDeletePod,  // name + uid (delete precondition, so a newer pod of that name survives)
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
};

const char* to_string(Action::Kind kind);

}  // namespace ddp3d::op::controller
