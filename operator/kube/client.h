// A synchronous REST client for the Kubernetes API over JSON. Objects are web::json::value;
// every non-2xx answer throws an ApiError subclass (errors.h), network failures throw
// TransportError. Thread-safe: one Client may be shared by all controller threads.
// A ScopedRequestDeadline (request_deadline.h) on the calling thread bounds its requests.
// Construction throws ConfigError when a bearer token would go to an http:// server.
#pragma once

#include <cpprest/json.h>

#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "operator/kube/config.h"
#include "operator/kube/resource.h"
#include "operator/kube/watch_event.h"

namespace ddp3d::kube {

struct ListOptions {
  std::string label_selector;  // "ddp3d.io/job-name=j,app in (a,b)"
  std::string field_selector;
  std::string resource_version;  // "" = most recent (quorum read); "0" = any cached
  int limit = 500;               // page size; list() follows `continue` until done
};

struct ObjectList {
  std::vector<web::json::value> items;
  std::string resource_version;  // the list's metadata.resourceVersion, to start a watch from
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386 JSON merge patch)
  kJson,            // application/json-patch+json (RFC 6902 operations)
  kStrategicMerge,  // application/strategic-merge-patch+json (core types only)
};

struct DeleteOptions {
  std::string propagation_policy;  // "", "Foreground", "Background", "Orphan"
  std::optional<long> grace_period_seconds;
  std::string precondition_uid;  // delete only this incarnation
  std::string precondition_resource_version;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // start after this version
  bool allow_bookmarks = true;
  int timeout_seconds = 0;  // server closes the stream after this; 0 = server default
};

class Client {
 public:
  explicit Client(Config config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const;

  web::json::value get(const Resource& r, const std::string& ns, const std::string& name);
  // Like get(), but nullopt instead of NotFoundError.
  std::optional<web::json::value> find(const Resource& r, const std::string& ns,
                                       const std::string& name);
  // `ns` empty lists across all namespaces.
  ObjectList list(const Resource& r, const std::string& ns, const ListOptions& options = {});

  // POST; `ns` empty takes metadata.namespace (or "default" for namespaced kinds).
  web::json::value create(const Resource& r, const std::string& ns, const web::json::value& obj);
  // PUT of the whole object; metadata.resourceVersion in `obj` makes it conditional, a stale
  // one throws ConflictError.
  web::json::value replace(const Resource& r, const std::string& ns, const web::json::value& obj);
  // PUT to the /status subresource (only status is taken from `obj`).
  web::json::value replace_status(const Resource& r, const std::string& ns,
                                  const web::json::value& obj);
  web::json::value patch(const Resource& r, const std::string& ns, const std::string& name,
                         const web::json::value& patch, PatchType type = PatchType::kMerge);
  web::json::value patch_status(const Resource& r, const std::string& ns, const std::string& name,
                                const web::json::value& patch, PatchType type = PatchType::kMerge);
  // DELETE; returns the server's answer (the object while finalizers run, or a Status).
  web::json::value remove(const Resource& r, const std::string& ns, const std::string& name,
                          const DeleteOptions& options = {});

  // One watch stream: calls `on_event` for every event until the server ends the stream
  // (returns normally) or `stop` is requested (returns normally, promptly). Throws GoneError
  // when the resourceVersion is too old (HTTP 410 or an ERROR event with code 410), other
  // ApiErrors for ERROR events / HTTP errors, TransportError when the connection breaks.
  // Watcher (watch.h) adds reconnects and re-lists on top.
  void watch_stream(const Resource& r, const std::string& ns, const WatchOptions& options,
                    const std::function<void(const WatchEvent&)>& on_event,
                    const std::stop_token& stop);

  // Fails every request in flight at once (TransportError) and every later one, and kills an
  // exec credential plugin that is running for a request (whose caller then gets a
  // ConfigError). For a process that lost its leader Lease (nothing it sent may still land
  // once a successor acts) or whose shutdown ran out of time. `reason` ends up in the errors
  // ("leadership lost"); the first one given stays. There is no undo; the process is expected
  // to exit. Thread-safe.
  void abort(const std::string& reason);

  // Raw request for anything not covered above; `path` includes the query string. Returns the
  // parsed JSON body (null for an empty body).
  web::json::value request(const std::string& method, const std::string& path,
                           const std::optional<web::json::value>& body = std::nullopt,
                           const std::string& content_type = "application/json");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Small accessors for object metadata ("" when absent).
std::string meta_name(const web::json::value& obj);
std::string meta_namespace(const web::json::value& obj);
std::string meta_resource_version(const web::json::value& obj);
std::string meta_uid(const web::json::value& obj);
// "ns/name" for namespaced objects, "name" otherwise — the informer cache and work-queue key.
std::string object_key(const web::json::value& obj);
std::string object_key(const std::string& ns, const std::string& name);

}  // namespace ddp3d::kube
