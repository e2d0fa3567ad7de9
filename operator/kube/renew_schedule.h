// When a leader renews its Lease and when it must give up, reckoned from the start of its
// last successful renewal (client-go's renew loop). Every renew API call must end by
// give_up_at(): a leader that has not renewed within renew_deadline stops leading, which,
// since renew_deadline < lease_duration, is before any other candidate may take the Lease.
#pragma once

#include <chrono>

#include "operator/kube/clock.h"

namespace ddp3d::kube {

class RenewSchedule {
 public:
  // The holder's clock; `last_renew` is when the (successful) acquisition started.
  RenewSchedule(const Clock& clock, std::chrono::milliseconds renew_deadline,
                std::chrono::milliseconds retry_period, Clock::time_point last_renew);

  // A renewal that started at `attempt_start` succeeded. The start, not the end, counts:
  // the renewTime it wrote is no later than that, and other candidates time the Lease from
  // when they see the write, which is later still.
  void renewed(Clock::time_point attempt_start);

  // The moment by which this process must have stopped leading unless it renews before.
  Clock::time_point give_up_at() const { return last_renew_ + renew_deadline_; }
  bool expired() const { return clock_.now() >= give_up_at(); }
  // When to start the next renewal: retry_period from now, but never after give_up_at().
  Clock::time_point next_attempt() const;

 private:
  const Clock& clock_;
  std::chrono::milliseconds renew_deadline_;
  std::chrono::milliseconds retry_period_;
  Clock::time_point last_renew_;
};

}  // namespace ddp3d::kube
