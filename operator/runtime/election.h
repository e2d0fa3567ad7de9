// The leader election the Manager drives, as an interface so the Manager's ordering can be
// tested with a fake; kube_election.h adapts kube::LeaderElector (a coordination.k8s.io Lease).
#pragma once

#include <functional>
#include <stop_token>
#include <string>

namespace ddp3d::op::runtime {

struct LeadershipCallbacks {
  std::function<void()> on_started_leading;  // called on the election's thread
  std::function<void()> on_stopped_leading;  // after losing or releasing leadership
};

class Election {
 public:
  virtual ~Election() = default;
  // Campaigns until elected, then holds leadership until it is lost or `stop` is requested;
  // a stop while leading releases the lease before returning. Blocks; the Manager runs it on
  // a thread of its own and joins it.
  virtual void run(const std::stop_token& stop, const LeadershipCallbacks& callbacks) = 0;
  // The shutdown ran out of time: makes a run() that is stopping (releasing the Lease, or in
  // a renewal) return promptly, its API calls failing at once; `why` is for those errors.
  // Called from another thread, at most once, while run() may be running. Must not throw.
  virtual void cut(const std::string& /*why*/) noexcept {}
};

}  // namespace ddp3d::op::runtime
