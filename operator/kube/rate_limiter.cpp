#include "operator/kube/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace ddp3d::kube {

ItemExponentialRateLimiter::ItemExponentialRateLimiter(duration base, duration max)
    : base_(base), max_(max) {}

RateLimiter::duration ItemExponentialRateLimiter::when(const std::string& item) {
  std::lock_guard lock(mu_);
  const int exp = failures_[item]++;
  // Compare in floating point so a large exponent cannot overflow the integer duration.
  const double delay = static_cast<double>(base_.count()) * std::pow(2.0, exp);
  if (delay >= static_cast<double>(max_.count())) return max_;
  return duration(static_cast<duration::rep>(delay));
}

void ItemExponentialRateLimiter::forget(const std::string& item) {
  std::lock_guard lock(mu_);
  failures_.erase(item);
}

int ItemExponentialRateLimiter::num_requeues(const std::string& item) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(std::shared_ptr<Clock> clock, double qps, int burst)
    : clock_(std::move(clock)),
      qps_(qps),
      burst_(static_cast<double>(burst)),
      tokens_(static_cast<double>(burst)),
      last_(clock_->now()) {}

RateLimiter::duration BucketRateLimiter::when(const std::string&) {
  std::lock_guard lock(mu_);
  const auto now = clock_->now();
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
  // Reserve a token even if none is left; the debt is paid back at qps_ per second.
  tokens_ -= 1.0;
  if (tokens_ >= 0) return duration::zero();
  return std::chrono::duration_cast<duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

MaxOfRateLimiter::MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
    : limiters_(std::move(limiters)) {}

RateLimiter::duration MaxOfRateLimiter::when(const std::string& item) {
  duration longest = duration::zero();
  for (auto& l : limiters_) longest = std::max(longest, l->when(item));
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& item) {
  for (auto& l : limiters_) l->forget(item);
}

int MaxOfRateLimiter::num_requeues(const std::string& item) const {
  int n = 0;
  for (const auto& l : limiters_) n = std::max(n, l->num_requeues(item));
  return n;
}

std::unique_ptr<RateLimiter> default_controller_rate_limiter(std::shared_ptr<Clock> clock) {
  using namespace std::chrono_literals;
  std::vector<std::unique_ptr<RateLimiter>> parts;
  parts.push_back(std::make_unique<ItemExponentialRateLimiter>(5ms, 1000s));
  parts.push_back(std::make_unique<BucketRateLimiter>(std::move(clock), 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(parts));
}

}  // namespace ddp3d::kube
