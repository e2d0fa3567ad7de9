// RFC 3339 timestamps as Kubernetes writes them ("2026-11-30T10:13:29Z", seconds precision).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ddp3d::op::api {

// Seconds since the Unix epoch, UTC.
using UnixSeconds = int64_t;

std::string format_rfc3339(UnixSeconds t);
// Accepts "YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)"; nullopt for anything else.
std::optional<UnixSeconds> parse_rfc3339(const std::string& s);

}  // namespace ddp3d::op::api
