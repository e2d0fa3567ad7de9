// List + watch of one resource kind (one namespace or all, optional label selector) into an
// ObjectCache, calling add/update/delete handlers on its own thread in event order. After a
// 410 Gone it re-lists and reports the difference (adds, updates, deletes) to the handlers.
// Handlers see the cached objects themselves (shared, immutable): no copy per event.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "operator/kube/client.h"
#include "operator/kube/object_cache.h"
#include "operator/kube/watch.h"

namespace ddp3d::kube {

struct InformerHandlers {
  std::function<void(const web::json::value& obj)> on_add;
  std::function<void(const web::json::value& old_obj, const web::json::value& new_obj)> on_update;
  std::function<void(const web::json::value& obj)> on_delete;  // the last known state
};

class Informer {
 public:
  struct Options {
    std::string label_selector;
    std::string field_selector;
    // Every resync period each cached object is re-delivered as on_update(obj, obj), so level-
    // triggered controllers revisit time-based conditions. Zero = never.
    std::chrono::milliseconds resync_period{0};
    Backoff::Options backoff{};
    int watch_timeout_seconds = 300;
    // Applied to every object as it arrives (list and watch), before it is cached or handed to
    // a handler: drops what the controller never reads, so the cache holds less (client-go's
    // SetTransform). Empty = keep objects whole.
    std::function<web::json::value(const web::json::value&)> transform;
  };

  Informer(Client& client, Resource resource, std::string ns, Options options);
  Informer(Client& client, Resource resource, std::string ns)
      : Informer(client, std::move(resource), std::move(ns), Options{}) {}
  ~Informer();  // stops

  // Register before start().
  void add_handlers(InformerHandlers handlers);

  void start();  // spawns the list/watch thread
  void stop();   // cancels the watch and joins; idempotent

  // True once the first list has been delivered to the cache and the handlers.
  bool has_synced() const { return synced_.load(); }
  // Waits up to `timeout` (less if `stop` is requested); returns has_synced().
  bool wait_for_sync(std::chrono::milliseconds timeout, const std::stop_token& stop = {}) const;

  const ObjectCache& cache() const { return cache_; }
  const Resource& resource() const { return resource_; }
  // The namespace it watches ("" = all, or a cluster-scoped resource).
  const std::string& watched_namespace() const { return ns_; }
  // The resourceVersion the cache reflects.
  std::string resource_version() const;
  // How often the watch has had to reconnect after an error (0 before start()).
  int watch_reconnects() const;

 private:
  std::string relist();
  void on_event(const WatchEvent& event);
  ObjectPtr ingest(const web::json::value& obj) const;
  void run(const std::stop_token& stop);

  Client& client_;
  Resource resource_;
  std::string ns_;
  Options options_;
  std::vector<InformerHandlers> handlers_;
  ObjectCache cache_;
  std::atomic<bool> synced_{false};
  mutable std::mutex sync_mu_;
  mutable std::condition_variable_any sync_cv_;  // _any: its waits take a stop token
  void dispatch_add(const web::json::value& obj);
  void dispatch_update(const web::json::value& old_obj, const web::json::value& new_obj);
  void dispatch_delete(const web::json::value& obj);
  void resync_loop(const std::stop_token& stop);

  std::mutex dispatch_mu_;  // handlers run one at a time (watch and resync threads)
  std::unique_ptr<Watcher> watcher_;
  std::jthread thread_;
  std::jthread resync_thread_;
};

}  // namespace ddp3d::kube
