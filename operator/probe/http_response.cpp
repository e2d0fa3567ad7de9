#include "operator/probe/http_response.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <system_error>

namespace ddp3d::op::probe {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Decodes a chunked body: hex size [;ext] CRLF data CRLF ... 0 CRLF [trailers] CRLF.
HttpBody dechunk(std::string_view in, std::size_t max_body_bytes) {
  HttpBody out;
  for (;;) {
    const size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) return {"truncated chunked body", ""};
    std::string_view size_text = in.substr(0, eol);
    size_text = trim(size_text.substr(0, size_text.find(';')));
    uint64_t size = 0;
    const auto [end, ec] =
        std::from_chars(size_text.data(), size_text.data() + size_text.size(), size, 16);
    if (size_text.empty() || ec != std::errc() || end != size_text.data() + size_text.size()) {
      return {"malformed chunk size", ""};
    }
    in.remove_prefix(eol + 2);
    if (size == 0) return out;  // trailers, if any, are not needed
    if (size > max_body_bytes - out.body.size()) {
      return {"body over " + std::to_string(max_body_bytes) + " bytes", ""};
    }
    if (in.size() < size + 2) return {"truncated chunked body", ""};
    out.body.append(in.substr(0, size));
    in.remove_prefix(size);
    if (in.substr(0, 2) != "\r\n") return {"malformed chunk end", ""};
    in.remove_prefix(2);
  }
}

}  // namespace

HttpBody parse_http_response(std::string_view raw, std::size_t max_body_bytes) {
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    return {raw.empty() ? "empty response" : "no end of the response headers", ""};
  }
  std::string_view head = raw.substr(0, head_end);
  const std::string_view rest = raw.substr(head_end + 4);
  const size_t status_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, status_end);
  // "HTTP/1.1 200 OK"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    return {"not an HTTP/1.x response", ""};
  }
  int code = 0;
  const auto [end, ec] = std::from_chars(status_line.data() + 9, status_line.data() + 12, code);
  if (ec != std::errc() || end != status_line.data() + 12) return {"malformed status line", ""};
  if (code != 200) return {"HTTP " + std::to_string(code), ""};
  bool chunked = false;
  std::optional<uint64_t> length;
  head = status_end == std::string_view::npos ? std::string_view{} : head.substr(status_end + 2);
  while (!head.empty()) {
    const size_t eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    head = eol == std::string_view::npos ? std::string_view{} : head.substr(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return {"malformed header line", ""};
    const std::string_view name = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "Transfer-Encoding")) {
      chunked = iequals(value, "chunked");
      if (!chunked && !iequals(value, "identity")) {
        return {"unsupported Transfer-Encoding " + std::string(value), ""};
      }
    } else if (iequals(name, "Content-Length")) {
      uint64_t n = 0;
      const auto [e, err] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || err != std::errc() || e != value.data() + value.size()) {
        return {"malformed Content-Length", ""};
      }
      length = n;
    }
  }
  if (chunked) return dechunk(rest, max_body_bytes);
  std::string_view body = rest;
  if (length) {
    if (*length > max_body_bytes)
      return {"body over " + std::to_string(max_body_bytes) + " bytes", ""};
    if (body.size() < *length) return {"body shorter than its Content-Length", ""};
    body = body.substr(0, *length);
  }
  if (body.size() > max_body_bytes)
    return {"body over " + std::to_string(max_body_bytes) + " bytes", ""};
  return {"", std::string(body)};
}

}  // namespace ddp3d::op::probe
