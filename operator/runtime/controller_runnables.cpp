#include "operator/runtime/controller_runnables.h"

namespace ddp3d::op::runtime {

void ControllerInformers::start(const std::stop_token& stop) {
  controller_.start_informers();
  controller_.wait_for_sync(stop);
}

void ControllerInformers::stop(StopMode /*mode*/) noexcept {
  controller_.stop_informers();
}

void ControllerWorkers::start(const std::stop_token& /*stop*/) {
  controller_.start_workers();
  metrics_.is_leader.Set(1);
}

void ControllerWorkers::stop(StopMode mode) noexcept {
  if (mode == StopMode::kAbandon) client_.abort("leadership lost");
  controller_.stop_workers(/*drain=*/mode == StopMode::kDrain);
  metrics_.is_leader.Set(0);
}

}  // namespace ddp3d::op::runtime
