// Exponential backoff with jitter for reconnects: delay_n = min(max, base * factor^n), then
// spread by +-jitter so that many clients do not reconnect in lockstep.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace ddp3d::kube {

class Backoff {
 public:
  struct Options {
    std::chrono::milliseconds base{200};
    std::chrono::milliseconds max{30000};
    double factor = 2.0;
    double jitter = 0.2;  // fraction: delay * [1 - jitter, 1 + jitter]
  };
  explicit Backoff(Options options, std::uint64_t seed = std::random_device{}());
  Backoff() : Backoff(Options{}) {}

  // The next delay; each call doubles (by `factor`) the un-jittered delay up to `max`.
  std::chrono::milliseconds next();
  // After a success: the next delay starts from `base` again.
  void reset() { attempt_ = 0; }
  int attempts() const { return attempt_; }

 private:
  Options opt_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace ddp3d::kube
