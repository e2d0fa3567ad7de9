// The leader-election record kept in a coordination.k8s.io/v1 Lease, and the pure decision
// rules of the election (who may take the lease when), separate from the API calls.
#pragma once

#include <cpprest/json.h>

#include <chrono>
#include <optional>
#include <string>

namespace ddp3d::kube {

using SystemTime = std::chrono::system_clock::time_point;

// Kubernetes MicroTime: "2006-01-02T15:04:05.000000Z" (RFC 3339, microseconds, UTC).
std::string format_micro_time(SystemTime t);
// Accepts RFC 3339 with or without fraction and with "Z" or a +hh:mm offset; throws
// std::invalid_argument naming the text otherwise.
SystemTime parse_micro_time(const std::string& text);

struct LeaseRecord {
  std::string holder_identity;
  int lease_duration_seconds = 0;
  std::optional<SystemTime> acquire_time;
  std::optional<SystemTime> renew_time;
  int lease_transitions = 0;

  bool operator==(const LeaseRecord&) const = default;
};

// Reads spec of a Lease object (absent fields stay default).
LeaseRecord lease_record_from(const web::json::value& lease);
// Writes `record` into the spec of `lease` (other fields kept).
void write_lease_record(web::json::value& lease, const LeaseRecord& record);

// Whether `identity` may take the lease now. As in client-go, expiry is judged from when this
// candidate last *observed* the record change (local monotonic time), not from renewTime, so
// clock skew between machines does not matter.
bool may_acquire(const LeaseRecord& observed, const std::string& identity,
                 std::chrono::steady_clock::time_point observed_at,
                 std::chrono::steady_clock::time_point now);

// The record `identity` writes to take or renew the lease.
LeaseRecord next_record(const LeaseRecord& observed, const std::string& identity,
                        std::chrono::seconds lease_duration, SystemTime now);

}  // namespace ddp3d::kube
