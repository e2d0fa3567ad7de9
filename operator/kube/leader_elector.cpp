#include "operator/kube/leader_elector.h"

#include <unistd.h>

#include <random>
#include <stdexcept>

#include "common/log.h"
#include "operator/kube/errors.h"
#include "operator/kube/interruptible_sleep.h"

namespace ddp3d::kube {

std::string default_identity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(*host ? host : "unknown") + "_" + std::to_string(getpid());
}

LeaderElector::LeaderElector(Client& client, LeaderElectionConfig config)
    : client_(client), config_(std::move(config)) {
  if (!(config_.retry_period.count() > 0 && config_.renew_deadline > config_.retry_period &&
        config_.lease_duration > config_.renew_deadline))
    throw std::invalid_argument(
        "leader election: need lease_duration > renew_deadline > retry_period > 0");
  if (config_.lease_duration < std::chrono::seconds(1))
    throw std::invalid_argument("leader election: lease_duration must be at least 1 s");
  if (config_.identity.empty()) throw std::invalid_argument("leader election: empty identity");
  if (config_.lease_name.empty()) throw std::invalid_argument("leader election: empty lease name");
}

std::string LeaderElector::observed_leader() const {
  std::lock_guard lock(mu_);
  return observed_.holder_identity;
}

bool LeaderElector::try_acquire_or_renew() {
  const auto& leases = resources::leases();
  const auto lease_seconds = std::chrono::ceil<std::chrono::seconds>(config_.lease_duration);
  const auto wall_now = std::chrono::system_clock::now();
  std::optional<web::json::value> lease =
      client_.find(leases, config_.lease_namespace, config_.lease_name);
  const auto now = std::chrono::steady_clock::now();

  if (!lease) {
    const LeaseRecord record = next_record({}, config_.identity, lease_seconds, wall_now);
    web::json::value obj = web::json::value::object();
    obj["apiVersion"] = web::json::value::string(leases.api_version());
    obj["kind"] = web::json::value::string(leases.kind);
    obj["metadata"]["name"] = web::json::value::string(config_.lease_name);
    obj["metadata"]["namespace"] = web::json::value::string(config_.lease_namespace);
    write_lease_record(obj, record);
    try {
      client_.create(leases, config_.lease_namespace, obj);
    } catch (const AlreadyExistsError&) {
      return false;  // another candidate created it first
    }
    std::lock_guard lock(mu_);
    observed_ = record;
    observed_at_ = now;
    return true;
  }

  const LeaseRecord current = lease_record_from(*lease);
  std::string new_leader;
  {
    std::lock_guard lock(mu_);
    if (!(current == observed_)) {
      if (current.holder_identity != observed_.holder_identity)
        new_leader = current.holder_identity;
      observed_ = current;
      observed_at_ = now;
    }
  }
  if (!new_leader.empty() && config_.on_new_leader) config_.on_new_leader(new_leader);
  {
    std::lock_guard lock(mu_);
    if (!may_acquire(observed_, config_.identity, observed_at_, now)) return false;
  }

  const LeaseRecord record = next_record(current, config_.identity, lease_seconds, wall_now);
  write_lease_record(*lease, record);  // keeps metadata.resourceVersion: a racing write conflicts
  try {
    client_.replace(leases, config_.lease_namespace, *lease);
  } catch (const ConflictError&) {
    return false;
  }
  std::lock_guard lock(mu_);
  observed_ = record;
  observed_at_ = now;
  return true;
}

void LeaderElector::release() {
  try {
    auto lease = client_.find(resources::leases(), config_.lease_namespace, config_.lease_name);
    if (!lease) return;
    const LeaseRecord current = lease_record_from(*lease);
    if (current.holder_identity != config_.identity) return;
    LeaseRecord released = current;
    released.holder_identity.clear();
    released.lease_duration_seconds = 1;
    released.renew_time = released.acquire_time = std::chrono::system_clock::now();
    write_lease_record(*lease, released);
    client_.replace(resources::leases(), config_.lease_namespace, *lease);
    log::info("leader election: released lease " + config_.lease_namespace + "/" +
              config_.lease_name);
  } catch (const std::exception& e) {
    log::warning(std::string("leader election: could not release the lease: ") + e.what());
  }
}

void LeaderElector::run(const std::stop_token& stop) {
  std::mt19937 rng(std::random_device{}());
  // client-go jitters the acquire retry by up to 20% so candidates do not collide forever.
  auto jittered = [&](std::chrono::milliseconds d) {
    return std::chrono::milliseconds(
        d.count() + std::uniform_int_distribution<long long>(0, d.count() / 5)(rng));
  };
  const std::string lease = config_.lease_namespace + "/" + config_.lease_name;

  for (;;) {
    if (stop.stop_requested()) return;
    bool acquired = false;
    try {
      acquired = try_acquire_or_renew();
    } catch (const std::exception& e) {
      log::warning("leader election: " + lease + ": " + e.what());
    }
    if (acquired) break;
    if (!detail::sleep_for(jittered(config_.retry_period), stop)) return;
  }

  leading_ = true;
  log::info("leader election: " + config_.identity + " became leader of " + lease);
  if (config_.on_started_leading) config_.on_started_leading();

  auto last_renew = std::chrono::steady_clock::now();
  while (detail::sleep_for(config_.retry_period, stop)) {
    bool renewed = false;
    try {
      renewed = try_acquire_or_renew();
    } catch (const std::exception& e) {
      log::warning("leader election: renew of " + lease + " failed: " + e.what());
    }
    const auto now = std::chrono::steady_clock::now();
    if (renewed) {
      last_renew = now;
    } else if (now - last_renew >= config_.renew_deadline) {
      log::warning("leader election: " + config_.identity + " lost " + lease +
                   " (not renewed within the renew deadline)");
      break;
    }
  }

  leading_ = false;
  if (stop.stop_requested() && config_.release_on_stop) release();
  if (config_.on_stopped_leading) config_.on_stopped_leading();
}

}  // namespace ddp3d::kube
