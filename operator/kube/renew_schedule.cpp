#include "operator/kube/renew_schedule.h"

#include <algorithm>

namespace ddp3d::kube {

RenewSchedule::RenewSchedule(const Clock& clock, std::chrono::milliseconds renew_deadline,
                             std::chrono::milliseconds retry_period, Clock::time_point last_renew)
    : clock_(clock),
      renew_deadline_(renew_deadline),
      retry_period_(retry_period),
      last_renew_(last_renew) {}

void RenewSchedule::renewed(Clock::time_point attempt_start) {
  last_renew_ = std::max(last_renew_, attempt_start);
}

Clock::time_point RenewSchedule::next_attempt() const {
  return std::min(clock_.now() + retry_period_, give_up_at());
}

}  // namespace ddp3d::kube
