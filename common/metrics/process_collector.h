// Standard process_* metrics (the names every Prometheus client library uses), read from
// /proc/self at scrape time: process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds, process_open_fds,
// process_max_fds.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ddp3d::metrics {

// Fields of /proc/<pid>/stat that the collector uses (units as in proc(5)).
struct ProcStat {
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::uint64_t start_time_ticks = 0;  // since boot
  std::uint64_t vsize_bytes = 0;
  std::int64_t rss_pages = 0;
};

// Parses the text of /proc/<pid>/stat (robust to spaces and parentheses in the command
// name). Throws std::runtime_error on malformed input.
ProcStat parse_proc_stat(std::string_view text);
// The "btime" line of /proc/stat (boot time, seconds since the epoch); nullopt if absent.
std::optional<std::uint64_t> parse_boot_time(std::string_view proc_stat_text);

// A prometheus-cpp source (add it to a Collection): every value is read when scraped.
class ProcessCollector : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override;
};

}  // namespace ddp3d::metrics
