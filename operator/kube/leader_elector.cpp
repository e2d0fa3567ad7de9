#include "operator/kube/leader_elector.h"

#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "common/log.h"
#include "operator/kube/errors.h"
#include "operator/kube/interruptible_sleep.h"
#include "operator/kube/renew_schedule.h"
#include "operator/kube/request_deadline.h"

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
  static const RealClock clock;

  Clock::time_point acquired_at;
  for (;;) {
    if (stop.stop_requested()) return;
    bool acquired = false;
    const auto start = clock.now();
    try {
      // An acquisition that lands late would leave no time to renew: bound it like a renewal.
      ScopedRequestDeadline deadline(start + config_.renew_deadline);
      acquired = try_acquire_or_renew();
    } catch (const std::exception& e) {
      log::warning("leader election: " + lease + ": " + e.what());
    }
    if (acquired) {
      acquired_at = start;
      break;
    }
    if (!detail::sleep_for(jittered(config_.retry_period), stop)) return;
  }

  leading_ = true;
  log::info("leader election: " + config_.identity + " became leader of " + lease);
  if (config_.on_started_leading) config_.on_started_leading();

  RenewSchedule schedule(clock, config_.renew_deadline, config_.retry_period, acquired_at);
  for (;;) {
    const auto wait =
        std::chrono::ceil<std::chrono::milliseconds>(schedule.next_attempt() - clock.now());
    if (!detail::sleep_for(std::max(wait, std::chrono::milliseconds(0)), stop)) break;
    if (schedule.expired()) {
      log::warning("leader election: " + config_.identity + " lost " + lease +
                   " (not renewed within the renew deadline of " +
                   std::to_string(config_.renew_deadline.count()) + " ms)");
      break;
    }
    const auto start = clock.now();
    try {
      // Every call of this attempt ends by give_up_at(), so a stalled API server cannot keep
      // this process leading past the renew deadline.
      ScopedRequestDeadline deadline(schedule.give_up_at());
      if (try_acquire_or_renew()) schedule.renewed(start);
    } catch (const std::exception& e) {
      log::warning("leader election: renew of " + lease + " failed: " + e.what());
    }
  }

  leading_ = false;
  if (stop.stop_requested() && config_.release_on_stop) release();
  if (config_.on_stopped_leading) config_.on_stopped_leading();
}

}  // namespace ddp3d::kube
