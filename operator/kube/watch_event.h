// The watch wire format: newline-delimited JSON objects {"type": ..., "object": {...}}.
// Pure parsing, independent of the HTTP stream, so it is unit-tested on its own.
#pragma once

#include <cpprest/json.h>

#include <string>
#include <string_view>
#include <vector>

namespace ddp3d::kube {

enum class EventType { kAdded, kModified, kDeleted, kBookmark, kError };

const char* to_string(EventType type);

struct WatchEvent {
  EventType type = EventType::kAdded;
  web::json::value object;  // the object; for kError a Status object
};

// Parses one line. Throws std::runtime_error naming the problem for malformed JSON, a
// missing/unknown "type" or a missing "object".
WatchEvent parse_watch_event(std::string_view line);

// Splits a byte stream into lines. Chunks may end anywhere (mid-line, mid-UTF-8 sequence);
// complete lines are returned without their '\n' (a trailing '\r' is dropped too), blank lines
// are skipped. A line longer than `max_line_bytes` throws (protects against a runaway stream).
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line_bytes = 64u << 20) : max_(max_line_bytes) {}
  std::vector<std::string> feed(std::string_view chunk);
  // Bytes received after the last newline.
  const std::string& pending() const { return partial_; }

 private:
  std::size_t max_;
  std::string partial_;
};

}  // namespace ddp3d::kube
