#include "operator/kube/backoff.h"

#include <algorithm>
#include <cmath>

namespace ddp3d::kube {

Backoff::Backoff(Options options, std::uint64_t seed) : opt_(options), rng_(seed) {}

std::chrono::milliseconds Backoff::next() {
  const double base = static_cast<double>(opt_.base.count());
  const double cap = static_cast<double>(opt_.max.count());
  // Cap the exponent first so that many failures cannot overflow the double.
  const double raw = std::min(cap, base * std::pow(opt_.factor, std::min(attempt_, 64)));
  ++attempt_;
  double delay = raw;
  if (opt_.jitter > 0) {
    std::uniform_real_distribution<double> spread(1.0 - opt_.jitter, 1.0 + opt_.jitter);
    delay = raw * spread(rng_);
  }
  return std::chrono::milliseconds(static_cast<long long>(std::max(0.0, delay)));
}

}  // namespace ddp3d::kube
