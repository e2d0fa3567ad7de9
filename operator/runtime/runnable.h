// What the operator Manager starts and stops: an HTTP server, the informers, the workers.
#pragma once

#include <stop_token>
#include <string>

namespace ddp3d::op::runtime {

// How a runnable is stopped. kDrain finishes the work already accepted (a graceful shutdown
// while still leading); kAbandon stops after the current item (leadership was lost, so
// another replica may already be acting on the same objects).
enum class StopMode { kDrain, kAbandon };

class Runnable {
 public:
  virtual ~Runnable() = default;
  // For logs and errors: "metrics server", "informers", "workers".
  virtual std::string name() const = 0;
  // Returns once the runnable is running. Throws std::exception if it cannot start. A long
  // start (a cache sync) returns early when `stop` is requested; the Manager then stops it.
  virtual void start(const std::stop_token& stop) = 0;
  // Stops and joins every thread start() created. Called once, after start() returned or
  // threw (so a half-started runnable cleans up too). Must not throw.
  virtual void stop(StopMode mode) noexcept = 0;
};

}  // namespace ddp3d::op::runtime
