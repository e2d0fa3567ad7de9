// runtime::Election on a coordination.k8s.io/v1 Lease (kube::LeaderElector).
#pragma once

#include <memory>

#include "operator/kube/client.h"
#include "operator/kube/config.h"
#include "operator/kube/leader_elector.h"
#include "operator/runtime/election.h"

namespace ddp3d::op::runtime {

class KubeElection : public Election {
 public:
  // Throws std::invalid_argument for inconsistent durations (as kube::LeaderElector does).
  // The config's on_started_leading/on_stopped_leading are replaced by the Manager's. The
  // election gets a client of its own whose requests time out within half the renew
  // deadline: a renewal that takes longer is useless, and the Lease release at shutdown
  // must not hold the exit for the general request timeout.
  KubeElection(const kube::Config& api, kube::LeaderElectionConfig config);
  void run(const std::stop_token& stop, const LeadershipCallbacks& callbacks) override;
  // Aborts the election's client (kube::Client::abort).
  void cut(const std::string& why) noexcept override;

 private:
  std::unique_ptr<kube::Client> client_;
  kube::LeaderElectionConfig config_;
};

}  // namespace ddp3d::op::runtime
