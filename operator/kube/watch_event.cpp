#include "operator/kube/watch_event.h"

#include <stdexcept>

namespace ddp3d::kube {

const char* to_string(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
    case EventType::kBookmark:
      return "BOOKMARK";
    case EventType::kError:
      return "ERROR";
  }
  return "?";
}

WatchEvent parse_watch_event(std::string_view line) {
  auto excerpt = [&] {
    return std::string(line.substr(0, 200)) + (line.size() > 200 ? "..." : "");
  };
  std::error_code ec;
  web::json::value v = web::json::value::parse(std::string(line), ec);
  if (ec)
    throw std::runtime_error("watch event is not valid JSON (" + ec.message() + "): " + excerpt());
  if (!v.is_object()) throw std::runtime_error("watch event is not a JSON object: " + excerpt());
  if (!v.has_string_field("type"))
    throw std::runtime_error("watch event has no string field 'type': " + excerpt());
  if (!v.has_object_field("object"))
    throw std::runtime_error("watch event has no object field 'object': " + excerpt());
  const std::string& type = v.at("type").as_string();
  WatchEvent ev;
  if (type == "ADDED")
    ev.type = EventType::kAdded;
  else if (type == "MODIFIED")
    ev.type = EventType::kModified;
  else if (type == "DELETED")
    ev.type = EventType::kDeleted;
  else if (type == "BOOKMARK")
    ev.type = EventType::kBookmark;
  else if (type == "ERROR")
    ev.type = EventType::kError;
  else
    throw std::runtime_error("watch event has unknown type '" + type + "'");
  ev.object = std::move(v.at("object"));
  return ev;
}

std::vector<std::string> LineSplitter::feed(std::string_view chunk) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < chunk.size()) {
    const std::size_t nl = chunk.find('\n', start);
    if (nl == std::string_view::npos) {
      partial_.append(chunk.substr(start));
      break;
    }
    partial_.append(chunk.substr(start, nl - start));
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    if (!partial_.empty()) lines.push_back(std::move(partial_));
    partial_.clear();
    start = nl + 1;
  }
  if (partial_.size() > max_)
    throw std::runtime_error("watch stream line exceeds " + std::to_string(max_) + " bytes");
  return lines;
}

}  // namespace ddp3d::kube
