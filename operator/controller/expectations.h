// What this replica has asked the API server to do and its informers have not shown yet
// (kube-controller-manager's ControllerExpectations). Pure logic: the caller passes the time.
//
// Why: the caches lag the server. A reconcile that runs between "POST pod" and the pod's
// ADDED event sees the pod missing and would act again; one that runs between a status write
// and its MODIFIED event would decide from the old status. Instead of comparing
// resourceVersions (opaque strings; the API forbids reading order into them), the controller
// records each write in flight and waits until the informer shows it.
#pragma once

#include <cpprest/json.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace ddp3d::op::controller {

using Clock = std::chrono::steady_clock;

// Creates and deletes of a job's pods and Services in flight. Keyed by job ("ns/name") and
// object ("pod/<name>", "service/<name>"). While a job has any, its reconcile waits: the
// events that meet them requeue it. An expectation older than `timeout` counts as met (and is
// dropped), so an event lost for good delays a job, never stalls it.
class ChildExpectations {
 public:
  explicit ChildExpectations(Clock::duration timeout) : timeout_(timeout) {}

  // Call before sending the request, so its event cannot arrive first.
  void expect_create(const std::string& job, const std::string& object, Clock::time_point now);
  void expect_delete(const std::string& job, const std::string& object, Clock::time_point now);
  // The informer showed the object (or the request failed, or found it already there/gone).
  void created(const std::string& job, const std::string& object);
  void deleted(const std::string& job, const std::string& object);
  // nullopt when the job's cached view includes all its writes (act now); otherwise how long
  // until the oldest of the rest would time out (the caller requeues after that at most).
  std::optional<Clock::duration> pending(const std::string& job, Clock::time_point now);
  void forget(const std::string& job);
  std::size_t jobs_waiting() const;

 private:
  struct InFlight {
    std::map<std::string, Clock::time_point> creates, deletes;
  };
  Clock::duration timeout_;
  mutable std::mutex mu_;
  std::map<std::string, InFlight> jobs_;
};

// The status this replica last wrote for each job, until the job informer shows it.
//
// A status write sent with resourceVersion B (the update is conditional) that succeeds creates
// the version right after B. So while the cache still holds B, or a version that B itself
// superseded, the written object is the fresher one; any other version in the cache is the
// written one or a later write by someone else, and the cache wins. No ordering of
// resourceVersions is assumed, only equality.
class StatusExpectations {
 public:
  using ObjectPtr = std::shared_ptr<const web::json::value>;
  explicit StatusExpectations(Clock::duration timeout) : timeout_(timeout) {}

  // After a successful status write: `sent` is the body (its resourceVersion was the
  // precondition), `written` the server's answer.
  void wrote(const std::string& key, const web::json::value& sent, ObjectPtr written,
             Clock::time_point now);
  // The object to reconcile from: `written` while `cached` is known to be older, else `cached`
  // (and the record is dropped).
  ObjectPtr freshest(const std::string& key, ObjectPtr cached, Clock::time_point now);
  void forget(const std::string& key);
  std::size_t size() const;

 private:
  struct Record {
    std::string uid;
    std::set<std::string> superseded;  // resourceVersions older than `written`
    ObjectPtr written;
    Clock::time_point at;
  };
  Clock::duration timeout_;
  mutable std::mutex mu_;
  std::map<std::string, Record> records_;
};

}  // namespace ddp3d::op::controller
