// Local wall-clock time as text, for log lines and run-folder names.
#pragma once

#include <ctime>
#include <string>

namespace ddp3d {

// `t` in the local time zone, formatted by strftime's `format`. Output of any length is
// returned whole.
std::string format_local_time(std::time_t t, const char* format);

// The current time, as format_local_time.
std::string format_local_now(const char* format);

}  // namespace ddp3d
