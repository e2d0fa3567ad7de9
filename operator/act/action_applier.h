// Act: sends reconcile's actions to the API server. Each create or delete raises an
// expectation (controller/expectations.h) that the informers' event for it lowers, so the next
// reconcile of the job waits for its own writes; a request that fails lowers it at once.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "operator/api/training_job.h"
#include "operator/controller/actions.h"
#include "operator/controller/event_aggregation.h"
#include "operator/controller/expectations.h"
#include "operator/kube/client.h"

namespace ddp3d::op::act {

class ActionApplier {
 public:
  // `identity`: the reportingInstance of the Events recorded. An Event repeated within
  // controller::kEventRepeatWindowSeconds is a PATCH of the first (controller/event_aggregation.h).
  ActionApplier(kube::Client& client, controller::ChildExpectations& in_flight,
                std::string identity);

  // Sends every action of one reconcile of job `key`, in order, even when one fails (one pod
  // that cannot be deleted must not keep the others holding GPUs); a run of pod creates or
  // deletes goes out under a slow-start window. `applied` is called after each success.
  // Returns the first error, or null.
  std::exception_ptr apply_all(const std::string& key, const api::ObjectMeta& job_meta,
                               const std::vector<controller::Action>& actions,
                               const std::function<void(const controller::Action&)>& applied);

  // Sends one action; AlreadyExists (deterministic names), NotFound (already gone) and
  // Conflict (a delete precondition: the name now belongs to a newer object) count as done.
  void apply(const std::string& key, const api::ObjectMeta& job_meta,
             const controller::Action& action);

  // The job is gone: drop what is remembered of it.
  void forget(const std::string& key);

 private:
  struct Sender;
  // Rendezvous Secrets and PodGroups are created once per attempt, and the operator may create
  // them but not read them: this memory (and AlreadyExists) stands in for a cache.
  bool created_before(const std::string& key, const std::string& name);
  void remember_created(const std::string& key, const std::string& name);

  kube::Client& client_;
  controller::ChildExpectations& in_flight_;
  std::string identity_;
  // A repeated Event updates the one already written (count, lastTimestamp).
  controller::EventAggregator events_;
  std::mutex created_mutex_;
  std::map<std::string, std::set<std::string>> created_once_;
};

// Pod requests of one job in flight at once. The API server's default max-inflight for
// mutations is 200 across all clients; 16 keeps one gang from taking a large share.
inline constexpr std::size_t kMaxConcurrentPodRequests = 16;

}  // namespace ddp3d::op::act
