// Leader election on a coordination.k8s.io/v1 Lease (client-go's algorithm): candidates try
// to create or take over the lease every retry_period; the leader renews it every
// retry_period and gives up leadership if it cannot renew within renew_deadline; a lease is
// taken over once its holder has not renewed for lease_duration. Every API call of a renewal
// runs under a deadline (ScopedRequestDeadline) of the last successful renewal's start +
// renew_deadline, so a stalled API server cannot stretch a renewal past it (RenewSchedule).
// On shutdown the leader releases the lease (empty holder) so a successor need not wait for
// expiry.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>

#include "operator/kube/client.h"
#include "operator/kube/lease.h"

namespace ddp3d::kube {

// "<hostname>_<pid>" — unique per process, readable in `kubectl get lease -o yaml`.
std::string default_identity();

struct LeaderElectionConfig {
  std::string lease_namespace = "default";
  std::string lease_name = "ddp3d-operator";
  std::string identity = default_identity();
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  bool release_on_stop = true;
  // Called on the elector's thread; keep them short (start/stop your workers and return).
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;  // after losing or releasing the lease
  std::function<void(const std::string& identity)> on_new_leader;  // any holder change seen
};

class LeaderElector {
 public:
  // Throws std::invalid_argument unless lease_duration > renew_deadline > retry_period > 0.
  LeaderElector(Client& client, LeaderElectionConfig config);

  // Campaigns until elected, then renews until leadership is lost or `stop` is requested.
  // Returns after on_stopped_leading (if it led). Run it again to campaign anew.
  void run(const std::stop_token& stop);

  bool is_leader() const { return leading_.load(); }
  // The holder last observed in the lease ("" if none).
  std::string observed_leader() const;
  const std::string& identity() const { return config_.identity; }

 private:
  bool try_acquire_or_renew();
  void release();

  Client& client_;
  LeaderElectionConfig config_;
  std::atomic<bool> leading_{false};
  mutable std::mutex mu_;
  LeaseRecord observed_;
  std::chrono::steady_clock::time_point observed_at_{};
  std::string observed_rv_;
};

}  // namespace ddp3d::kube
