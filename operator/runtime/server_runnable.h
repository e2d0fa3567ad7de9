// An http::Server (metrics or probes) as a Manager runnable.
#pragma once

#include <string>

#include "common/http/server.h"
#include "operator/runtime/runnable.h"

namespace ddp3d::op::runtime {

class ServerRunnable : public Runnable {
 public:
  // `server` must outlive this object.
  ServerRunnable(std::string name, http::Server& server)
      : name_(std::move(name)), server_(server) {}
  std::string name() const override { return name_; }
  void start(const std::stop_token& stop) override;
  void stop(StopMode mode) noexcept override;

 private:
  std::string name_;
  http::Server& server_;
};

}  // namespace ddp3d::op::runtime
