// How long to wait before an item is retried, in client-go's model: per-item exponential
// backoff (failures of one key do not slow others), an overall token bucket (a storm of
// failures cannot flood the API server), and the maximum of both.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "operator/kube/clock.h"

namespace ddp3d::kube {

class RateLimiter {
 public:
  using duration = std::chrono::steady_clock::duration;
  virtual ~RateLimiter() = default;
  // The delay before `item` may be processed again; counts as one more failure of `item`.
  virtual duration when(const std::string& item) = 0;
  // The item succeeded: clear its failure history.
  virtual void forget(const std::string& item) = 0;
  virtual int num_requeues(const std::string& item) const = 0;
};

// base * 2^failures, capped at max.
class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(duration base, duration max);
  duration when(const std::string& item) override;
  void forget(const std::string& item) override;
  int num_requeues(const std::string& item) const override;

 private:
  duration base_, max_;
  mutable std::mutex mu_;
  std::map<std::string, int> failures_;
};

// Token bucket: `qps` tokens per second, at most `burst` saved; each when() reserves a token
// and returns how long until it is available. Not per item (forget is a no-op).
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(std::shared_ptr<Clock> clock, double qps, int burst);
  duration when(const std::string& item) override;
  void forget(const std::string&) override {}
  int num_requeues(const std::string&) const override { return 0; }

 private:
  std::shared_ptr<Clock> clock_;
  double qps_;
  double burst_;
  mutable std::mutex mu_;
  double tokens_;
  Clock::time_point last_;
};

// The longest delay of its members; forget/num_requeues go to all (max of counts).
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters);
  duration when(const std::string& item) override;
  void forget(const std::string& item) override;
  int num_requeues(const std::string& item) const override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// client-go's default controller limiter: max(per-item 5ms..1000s, bucket 10 qps / burst 100).
std::unique_ptr<RateLimiter> default_controller_rate_limiter(std::shared_ptr<Clock> clock);

}  // namespace ddp3d::kube
