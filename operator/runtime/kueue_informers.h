// The operator's view of Kueue: whether the cluster serves Kueue's Workload API and, once it
// does, informers on the Workloads in the watched namespaces (those labelled with a job's
// name) and on ResourceFlavors. Kueue may be installed after the operator started: while it
// is not served, a reconcile of a queued job asks discovery again, at most every 30 s, and the
// informers start when it appears.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "operator/kube/client.h"
#include "operator/kube/informer.h"

namespace ddp3d::op::runtime {

class KueueInformers {
 public:
  // `on_workload(workload, gone)`: a Workload was added, changed or deleted.
  using OnWorkload = std::function<void(const web::json::value& workload, bool gone)>;

  // `namespaces`: the watched ones ("" = all). Not `enabled`: never served, nothing asked.
  KueueInformers(kube::Client& client, std::vector<std::string> namespaces, bool enabled,
                 OnWorkload on_workload);
  ~KueueInformers();  // stop()
  KueueInformers(const KueueInformers&) = delete;
  KueueInformers& operator=(const KueueInformers&) = delete;

  // With the operator's other informers: asks discovery once and, when Kueue is served,
  // creates its informers (returned by informers(), which the caller starts and syncs).
  // A discovery error counts as not served; a queued job asks again.
  void discover();
  std::vector<kube::Informer*> informers() const;

  struct View {
    bool served = false;  // the Workload API is served and its informers have synced
    // Null unless served.
    const kube::ObjectCache* workloads = nullptr;
    const kube::ObjectCache* resource_flavors = nullptr;
    // Not synced yet (just started): reconcile again shortly.
    bool syncing = false;
  };
  // For a reconcile in namespace `ns`. Throws on a transient discovery error.
  View view(const std::string& ns);

  // The value of PriorityClass `name`, nullopt when there is none of that name. Cached for a
  // minute. Throws on other API errors.
  std::optional<int32_t> priority_of(const std::string& name);

  void stop();

 private:
  bool served_now();  // discovery request
  void create_informers_locked();

  kube::Client& client_;
  std::vector<std::string> namespaces_;
  bool enabled_;
  OnWorkload on_workload_;
  mutable std::mutex mutex_;
  bool served_ = false;
  bool started_lazily_ = false;
  std::optional<std::chrono::steady_clock::time_point> next_discovery_;
  std::map<std::string, std::unique_ptr<kube::Informer>> workloads_;  // by namespace
  std::unique_ptr<kube::Informer> flavors_;
  struct Priority {
    std::optional<int32_t> value;
    std::chrono::steady_clock::time_point read;
  };
  std::map<std::string, Priority> priorities_;
  bool stopped_ = false;
};

}  // namespace ddp3d::op::runtime
