#include "common/metrics/process_collector.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ddp3d::metrics {
namespace {

template <class T>
T parse_number(std::string_view token, int field) {
  T value{};
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || ptr != token.data() + token.size()) {
    throw std::runtime_error("/proc/<pid>/stat: field " + std::to_string(field) +
                             " is not a number: '" + std::string(token) + "'");
  }
  return value;
}

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Entries of /proc/self/fd, not counting the descriptor used to list them.
std::optional<double> count_open_fds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    return std::nullopt;
  }
  const std::string own = std::to_string(dirfd(dir));
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == ".." || name == own) {
      continue;
    }
    ++count;
  }
  closedir(dir);
  return count;
}

prometheus::MetricFamily single(const char* name, const char* help, prometheus::MetricType type,
                                double value) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return prometheus::MetricFamily{name, help, type, {m}};
}

}  // namespace

ProcStat parse_proc_stat(std::string_view text) {
  // "pid (comm) state ppid ...": comm may hold spaces and ')', so split after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) {
    throw std::runtime_error("/proc/<pid>/stat: no ')' closing the command name");
  }
  std::vector<std::string_view> fields;  // fields[0] is field 3 (state) of proc(5)
  std::string_view rest = text.substr(close + 1);
  while (!rest.empty()) {
    const auto start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(start);
    const auto end = rest.find_first_of(" \n");
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  }
  constexpr int kLastNeeded = 24;  // rss
  if (fields.size() < kLastNeeded - 2) {
    throw std::runtime_error("/proc/<pid>/stat: expected at least " + std::to_string(kLastNeeded) +
                             " fields, got " + std::to_string(fields.size() + 2));
  }
  auto field = [&](int n) { return fields[static_cast<std::size_t>(n - 3)]; };
  ProcStat s;
  s.utime_ticks = parse_number<std::uint64_t>(field(14), 14);
  s.stime_ticks = parse_number<std::uint64_t>(field(15), 15);
  s.start_time_ticks = parse_number<std::uint64_t>(field(22), 22);
  s.vsize_bytes = parse_number<std::uint64_t>(field(23), 23);
  s.rss_pages = parse_number<std::int64_t>(field(24), 24);
  return s;
}

std::optional<std::uint64_t> parse_boot_time(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(pos, end - pos);
    if (line.starts_with("btime ")) {
      line.remove_prefix(6);
      std::uint64_t value = 0;
      const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), value);
      if (ec == std::errc()) {
        return value;
      }
      return std::nullopt;
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // A scrape must not fail because one source is unreadable: skip what cannot be read.
  if (const auto stat_text = read_file("/proc/self/stat")) {
    try {
      const ProcStat s = parse_proc_stat(*stat_text);
      out.push_back(single("process_cpu_seconds_total",
                           "Total user and system CPU time spent in seconds.",
                           prometheus::MetricType::Counter,
                           static_cast<double>(s.utime_ticks + s.stime_ticks) / ticks));
      out.push_back(single("process_resident_memory_bytes", "Resident memory size in bytes.",
                           prometheus::MetricType::Gauge, static_cast<double>(s.rss_pages) * page));
      out.push_back(single("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                           prometheus::MetricType::Gauge, static_cast<double>(s.vsize_bytes)));
      const auto boot = read_file("/proc/stat");
      if (const auto btime = boot ? parse_boot_time(*boot) : std::nullopt) {
        out.push_back(single(
            "process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
            prometheus::MetricType::Gauge,
            static_cast<double>(*btime) + static_cast<double>(s.start_time_ticks) / ticks));
      }
    } catch (const std::runtime_error&) {
      // Malformed /proc/self/stat (not Linux?): leave these families out.
    }
  }
  if (const auto fds = count_open_fds()) {
    out.push_back(single("process_open_fds", "Number of open file descriptors.",
                         prometheus::MetricType::Gauge, *fds));
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    const double max = limit.rlim_cur == RLIM_INFINITY ? std::numeric_limits<double>::infinity()
                                                       : static_cast<double>(limit.rlim_cur);
    out.push_back(single("process_max_fds", "Maximum number of open file descriptors.",
                         prometheus::MetricType::Gauge, max));
  }
  return out;
}

}  // namespace ddp3d::metrics
