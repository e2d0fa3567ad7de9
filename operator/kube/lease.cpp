#include "operator/kube/lease.h"

#include <cstdio>
#include <stdexcept>

namespace ddp3d::kube {

std::string format_micro_time(SystemTime t) {
  using namespace std::chrono;
  const auto us = time_point_cast<microseconds>(t);
  const auto day = floor<days>(us);
  const year_month_day ymd(day);
  const hh_mm_ss<microseconds> hms(us - day);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
                static_cast<int>(hms.minutes().count()), static_cast<int>(hms.seconds().count()),
                static_cast<long long>(hms.subseconds().count()));
  return buf;
}

SystemTime parse_micro_time(const std::string& text) {
  using namespace std::chrono;
  auto bad = [&](const char* why) {
    return std::invalid_argument("invalid RFC 3339 time '" + text + "': " + why);
  };
  int y, mo, d, h, mi, s;
  int used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &used) !=
          6 ||
      used != 19)
    throw bad("expected YYYY-MM-DDTHH:MM:SS");
  const year_month_day ymd{year(y), month(static_cast<unsigned>(mo)),
                           day(static_cast<unsigned>(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) throw bad("date or time out of range");
  std::size_t i = 19;
  microseconds frac{0};
  if (i < text.size() && text[i] == '.') {
    ++i;
    long long value = 0;
    int digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (digits < 6) {
        value = value * 10 + (text[i] - '0');
        ++digits;
      }
      ++i;
    }
    if (digits == 0) throw bad("empty fraction");
    while (digits++ < 6) value *= 10;
    frac = microseconds(value);
  }
  minutes offset{0};
  if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) {
    ++i;
  } else if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int oh, om;
    if (text.size() - i != 6 || std::sscanf(text.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2 ||
        text[i + 3] != ':')
      throw bad("bad zone offset");
    offset = hours(oh) + minutes(om);
    if (text[i] == '-') offset = -offset;
    i += 6;
  } else {
    throw bad("missing zone (Z or +hh:mm)");
  }
  if (i != text.size()) throw bad("trailing characters");
  const auto local = sys_days(ymd) + hours(h) + minutes(mi) + seconds(s) + frac;
  return time_point_cast<SystemTime::duration>(local - offset);
}

LeaseRecord lease_record_from(const web::json::value& lease) {
  LeaseRecord r;
  if (!lease.is_object() || !lease.has_object_field("spec")) return r;
  const auto& spec = lease.at("spec");
  if (spec.has_string_field("holderIdentity"))
    r.holder_identity = spec.at("holderIdentity").as_string();
  if (spec.has_integer_field("leaseDurationSeconds"))
    r.lease_duration_seconds = spec.at("leaseDurationSeconds").as_integer();
  if (spec.has_string_field("acquireTime"))
    r.acquire_time = parse_micro_time(spec.at("acquireTime").as_string());
  if (spec.has_string_field("renewTime"))
    r.renew_time = parse_micro_time(spec.at("renewTime").as_string());
  if (spec.has_integer_field("leaseTransitions"))
    r.lease_transitions = spec.at("leaseTransitions").as_integer();
  return r;
}

void write_lease_record(web::json::value& lease, const LeaseRecord& r) {
  web::json::value& spec = lease["spec"];
  if (!spec.is_object()) spec = web::json::value::object();
  spec["holderIdentity"] = web::json::value::string(r.holder_identity);
  spec["leaseDurationSeconds"] = web::json::value::number(r.lease_duration_seconds);
  spec["leaseTransitions"] = web::json::value::number(r.lease_transitions);
  if (r.acquire_time)
    spec["acquireTime"] = web::json::value::string(format_micro_time(*r.acquire_time));
  else
    spec.erase("acquireTime");
  if (r.renew_time)
    spec["renewTime"] = web::json::value::string(format_micro_time(*r.renew_time));
  else
    spec.erase("renewTime");
}

bool may_acquire(const LeaseRecord& observed, const std::string& identity,
                 std::chrono::steady_clock::time_point observed_at,
                 std::chrono::steady_clock::time_point now) {
  if (observed.holder_identity.empty() || observed.holder_identity == identity) return true;
  return observed_at + std::chrono::seconds(observed.lease_duration_seconds) <= now;
}

LeaseRecord next_record(const LeaseRecord& observed, const std::string& identity,
                        std::chrono::seconds lease_duration, SystemTime now) {
  LeaseRecord r;
  r.holder_identity = identity;
  r.lease_duration_seconds = static_cast<int>(lease_duration.count());
  r.renew_time = now;
  if (observed.holder_identity == identity && observed.acquire_time) {
    r.acquire_time = observed.acquire_time;  // a renewal keeps the acquisition time
    r.lease_transitions = observed.lease_transitions;
  } else {
    r.acquire_time = now;
    // A brand-new record starts at 0; any change of holder (also after a release) counts one.
    r.lease_transitions = observed.holder_identity.empty() && !observed.renew_time
                              ? observed.lease_transitions
                              : observed.lease_transitions + 1;
  }
  return r;
}

}  // namespace ddp3d::kube
