#include "operator/runtime/kueue_informers.h"

#include <climits>

#include "common/log.h"
#include "operator/api/names.h"
#include "operator/kube/errors.h"
#include "operator/kube/resource.h"

namespace ddp3d::op::runtime {

using web::json::value;

namespace {

constexpr auto kRediscoverEvery = std::chrono::seconds(30);
constexpr auto kPriorityFreshFor = std::chrono::seconds(60);

}  // namespace

KueueInformers::KueueInformers(kube::Client& client, std::vector<std::string> namespaces,
                               bool enabled, OnWorkload on_workload)
    : client_(client),
      namespaces_(std::move(namespaces)),
      enabled_(enabled),
      on_workload_(std::move(on_workload)) {
  if (namespaces_.empty()) namespaces_.push_back("");
}

KueueInformers::~KueueInformers() {
  stop();
}

bool KueueInformers::served_now() {
  value list;
  try {
    list = client_.request("GET", "/apis/" + kube::resources::workloads().api_version());
  } catch (const kube::NotFoundError&) {
    return false;
  }
  bool workloads = false;
  bool flavors = false;
  if (list.has_field("resources") && list.at("resources").is_array()) {
    for (const auto& r : list.at("resources").as_array()) {
      if (!r.has_string_field("name")) continue;
      workloads |= r.at("name").as_string() == kube::resources::workloads().plural;
      flavors |= r.at("name").as_string() == kube::resources::resource_flavors().plural;
    }
  }
  return workloads && flavors;
}

void KueueInformers::create_informers_locked() {
  kube::Informer::Options opts;
  // Only the Workloads the operator owns carry the job-name label.
  opts.label_selector = api::kLabelJobName;
  auto handle = [this](const value& w, bool gone) {
    if (on_workload_) on_workload_(w, gone);
  };
  for (const auto& ns : namespaces_) {
    auto inf = std::make_unique<kube::Informer>(client_, kube::resources::workloads(), ns, opts);
    inf->add_handlers({[handle](const value& w) { handle(w, false); },
                       [handle](const value&, const value& w) { handle(w, false); },
                       [handle](const value& w) { handle(w, true); }});
    workloads_[ns] = std::move(inf);
  }
  flavors_ = std::make_unique<kube::Informer>(client_, kube::resources::resource_flavors(), "");
  served_ = true;
}

void KueueInformers::discover() {
  const std::lock_guard lock(mutex_);
  if (served_ || !enabled_) return;
  bool served = false;
  try {
    served = served_now();
  } catch (const std::exception& e) {
    log::warning(std::string("Kueue discovery failed (asked again for a queued job): ") + e.what());
  }
  if (!served) {
    log::info("Kueue's Workload API (" + kube::resources::workloads().api_version() +
              ") is not served: jobs labelled kueue.x-k8s.io/queue-name wait as Queued");
    next_discovery_ = std::chrono::steady_clock::now() + kRediscoverEvery;
    return;
  }
  log::info("Kueue's Workload API is served: watching Workloads and ResourceFlavors");
  create_informers_locked();
}

std::vector<kube::Informer*> KueueInformers::informers() const {
  const std::lock_guard lock(mutex_);
  std::vector<kube::Informer*> out;
  if (started_lazily_) return out;  // started and stopped here
  for (const auto& [ns, inf] : workloads_) out.push_back(inf.get());
  if (flavors_) out.push_back(flavors_.get());
  return out;
}

KueueInformers::View KueueInformers::view(const std::string& ns) {
  const std::lock_guard lock(mutex_);
  if (!served_ && !stopped_ && enabled_) {
    const auto now = std::chrono::steady_clock::now();
    if (!next_discovery_ || now >= *next_discovery_) {
      next_discovery_ = now + kRediscoverEvery;
      if (served_now()) {
        log::info("Kueue's Workload API is now served: watching Workloads and ResourceFlavors");
        create_informers_locked();
        started_lazily_ = true;
        for (auto& [n, inf] : workloads_) inf->start();
        flavors_->start();
      }
    }
  }
  View v;
  if (!served_) return v;
  const auto it = workloads_.count(ns) ? workloads_.find(ns) : workloads_.find("");
  if (it == workloads_.end()) return v;
  if (!it->second->has_synced() || !flavors_->has_synced()) {
    v.syncing = true;
    return v;
  }
  v.served = true;
  v.workloads = &it->second->cache();
  v.resource_flavors = &flavors_->cache();
  return v;
}

std::optional<int32_t> KueueInformers::priority_of(const std::string& name) {
  const auto now = std::chrono::steady_clock::now();
  {
    const std::lock_guard lock(mutex_);
    const auto it = priorities_.find(name);
    if (it != priorities_.end() && now - it->second.read < kPriorityFreshFor) {
      return it->second.value;
    }
  }
  Priority p{std::nullopt, now};
  try {
    const value pc = client_.get(kube::resources::priority_classes(), "", name);
    if (pc.has_field("value") && pc.at("value").is_number() &&
        pc.at("value").as_number().is_int64()) {
      const int64_t v = pc.at("value").as_number().to_int64();
      if (v >= INT32_MIN && v <= INT32_MAX) p.value = static_cast<int32_t>(v);
    }
  } catch (const kube::NotFoundError&) {
  }
  const std::lock_guard lock(mutex_);
  if (priorities_.size() >= 1024) priorities_.clear();
  priorities_[name] = p;
  return p.value;
}

void KueueInformers::stop() {
  std::vector<kube::Informer*> lazily;
  {
    const std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    if (!started_lazily_) return;  // the caller stops them with its own informers
    for (auto& [ns, inf] : workloads_) lazily.push_back(inf.get());
    if (flavors_) lazily.push_back(flavors_.get());
  }
  for (auto* inf : lazily) inf->stop();
}

}  // namespace ddp3d::op::runtime
