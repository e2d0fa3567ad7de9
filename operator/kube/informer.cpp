#include "operator/kube/informer.h"

#include <map>

#include "common/log.h"
#include "operator/kube/interruptible_sleep.h"

namespace ddp3d::kube {

Informer::Informer(Client& client, Resource resource, std::string ns, Options options)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      options_(std::move(options)) {}

Informer::~Informer() {
  stop();
}

void Informer::add_handlers(InformerHandlers handlers) {
  std::lock_guard lock(dispatch_mu_);
  handlers_.push_back(std::move(handlers));
}

void Informer::start() {
  if (thread_.joinable()) return;
  Watcher::Options wo;
  wo.watch.label_selector = options_.label_selector;
  wo.watch.field_selector = options_.field_selector;
  wo.backoff = options_.backoff;
  wo.min_timeout_seconds = options_.watch_timeout_seconds;
  watcher_ = std::make_unique<Watcher>(
      client_, resource_, ns_, wo, [this](const WatchEvent& ev) { on_event(ev); },
      [this] { return relist(); });
  thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
  if (options_.resync_period.count() > 0)
    resync_thread_ = std::jthread([this](const std::stop_token& stop) { resync_loop(stop); });
}

void Informer::stop() {
  for (std::jthread* t : {&resync_thread_, &thread_}) {
    if (!t->joinable()) continue;
    t->request_stop();
    t->join();
  }
}

bool Informer::wait_for_sync(std::chrono::milliseconds timeout, const std::stop_token& stop) const {
  std::unique_lock lock(sync_mu_);
  return sync_cv_.wait_for(lock, stop, timeout, [this] { return synced_.load(); });
}

std::string Informer::resource_version() const {
  return watcher_ ? watcher_->resource_version() : std::string();
}

int Informer::watch_reconnects() const {
  return watcher_ ? watcher_->reconnects() : 0;
}

void Informer::run(const std::stop_token& stop) {
  watcher_->run(stop);
}

std::string Informer::relist() {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  ObjectList fresh = client_.list(resource_, ns_, lo);
  std::vector<ObjectPtr> items;
  items.reserve(fresh.items.size());
  for (const auto& obj : fresh.items) items.push_back(ingest(obj));
  fresh.items.clear();

  std::map<std::string, ObjectPtr> before;
  for (auto& obj : cache_.list()) before.emplace(object_key(*obj), std::move(obj));
  // Deletions the watch missed are reported with the last state we knew.
  cache_.replace_all(items, [this](const ObjectPtr& gone) { dispatch_delete(*gone); });
  for (const auto& obj : items) {
    auto it = before.find(object_key(*obj));
    if (it == before.end())
      dispatch_add(*obj);
    else if (meta_resource_version(*it->second) != meta_resource_version(*obj))
      dispatch_update(*it->second, *obj);
  }
  if (!synced_.exchange(true)) {
    std::lock_guard lock(sync_mu_);
    sync_cv_.notify_all();
  }
  return fresh.resource_version;
}

ObjectPtr Informer::ingest(const web::json::value& obj) const {
  if (options_.transform) return std::make_shared<const web::json::value>(options_.transform(obj));
  return std::make_shared<const web::json::value>(obj);
}

void Informer::on_event(const WatchEvent& ev) {
  switch (ev.type) {
    case EventType::kAdded:
    case EventType::kModified: {
      ObjectPtr obj = ingest(ev.object);
      auto old = cache_.upsert(obj);
      if (old)
        dispatch_update(*old, *obj);
      else
        dispatch_add(*obj);
      break;
    }
    case EventType::kDeleted: {
      ObjectPtr obj = ingest(ev.object);
      cache_.erase(object_key(*obj));
      dispatch_delete(*obj);
      break;
    }
    case EventType::kBookmark:
    case EventType::kError:
      break;
  }
}

void Informer::resync_loop(const std::stop_token& stop) {
  while (detail::sleep_for(options_.resync_period, stop)) {
    if (!synced_) continue;
    for (const auto& obj : cache_.list()) dispatch_update(*obj, *obj);
  }
}

namespace {
template <typename F>
void guarded(const Resource& r, const char* what, F&& f) {
  // A throwing handler must not kill the watch (it would re-list forever); log and go on.
  try {
    f();
  } catch (const std::exception& e) {
    log::error("informer " + r.plural + ": " + what + " handler threw: " + e.what());
  }
}
}  // namespace

void Informer::dispatch_add(const web::json::value& obj) {
  std::lock_guard lock(dispatch_mu_);
  for (auto& h : handlers_)
    if (h.on_add) guarded(resource_, "add", [&] { h.on_add(obj); });
}

void Informer::dispatch_update(const web::json::value& old_obj, const web::json::value& new_obj) {
  std::lock_guard lock(dispatch_mu_);
  for (auto& h : handlers_)
    if (h.on_update) guarded(resource_, "update", [&] { h.on_update(old_obj, new_obj); });
}

void Informer::dispatch_delete(const web::json::value& obj) {
  std::lock_guard lock(dispatch_mu_);
  for (auto& h : handlers_)
    if (h.on_delete) guarded(resource_, "delete", [&] { h.on_delete(obj); });
}

}  // namespace ddp3d::kube
