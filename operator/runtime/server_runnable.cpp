#include "operator/runtime/server_runnable.h"

#include "common/log.h"

namespace ddp3d::op::runtime {

void ServerRunnable::start(const std::stop_token& /*stop*/) {
  server_.start();
  log::info(name_ + " listening on port " + std::to_string(server_.port()));
}

void ServerRunnable::stop(StopMode /*mode*/) noexcept {
  server_.stop();
}

}  // namespace ddp3d::op::runtime
