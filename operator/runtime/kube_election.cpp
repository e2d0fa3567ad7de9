#include "operator/runtime/kube_election.h"

#include <algorithm>
#include <utility>

namespace ddp3d::op::runtime {

namespace {
kube::Config with_timeout(kube::Config api, std::chrono::milliseconds limit) {
  api.request_timeout = std::min(api.request_timeout, limit);
  return api;
}
}  // namespace

KubeElection::KubeElection(const kube::Config& api, kube::LeaderElectionConfig config)
    : client_(std::make_unique<kube::Client>(with_timeout(api, config.renew_deadline / 2))),
      config_(std::move(config)) {
  kube::LeaderElector validate(*client_, config_);  // throws now rather than in run()
}

void KubeElection::run(const std::stop_token& stop, const LeadershipCallbacks& callbacks) {
  kube::LeaderElectionConfig config = config_;
  config.on_started_leading = callbacks.on_started_leading;
  config.on_stopped_leading = callbacks.on_stopped_leading;
  kube::LeaderElector elector(*client_, std::move(config));
  elector.run(stop);
}

void KubeElection::cut(const std::string& why) noexcept {
  client_->abort(why);
}

}  // namespace ddp3d::op::runtime
