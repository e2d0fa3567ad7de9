#include "common/http/request.h"

#include <cctype>
#include <vector>

namespace ddp3d::http {
namespace {

// RFC 9110 "tchar": the characters allowed in methods and header names.
bool is_tchar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

ParseResult fail(int status, std::string reason) {
  ParseResult r;
  r.error_status = status;
  r.error = std::move(reason);
  return r;
}

std::vector<std::string_view> split_lines(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    auto end = head.find('\n');
    std::string_view line = head.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    head.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace

ParseResult parse_request_head(std::string_view head) {
  const auto lines = split_lines(head);
  if (lines.empty() || lines[0].empty()) return fail(400, "empty request line");

  // Request line: exactly three parts separated by single spaces.
  const std::string_view line = lines[0];
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return fail(400, "request line must be 'METHOD TARGET VERSION'");
  }
  Request req;
  req.method = std::string(line.substr(0, sp1));
  req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  req.version = std::string(line.substr(sp2 + 1));
  if (!is_token(req.method)) return fail(400, "invalid method");
  if (req.target.empty() || req.target[0] != '/') {
    return fail(400, "request target must be an absolute path");
  }
  for (char c : req.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return fail(400, "control character in request target");
    }
  }
  if (req.version != "HTTP/1.1" && req.version != "HTTP/1.0") {
    if (req.version.size() == 8 && req.version.starts_with("HTTP/") &&
        std::isdigit(static_cast<unsigned char>(req.version[5])) && req.version[6] == '.' &&
        std::isdigit(static_cast<unsigned char>(req.version[7]))) {
      return fail(505, "unsupported HTTP version " + req.version);
    }
    return fail(400, "invalid HTTP version");
  }
  const auto q = req.target.find('?');
  req.path = req.target.substr(0, q);
  if (q != std::string::npos) req.query = req.target.substr(q + 1);

  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view h = lines[i];
    if (h.empty()) break;  // end of head
    if (h.front() == ' ' || h.front() == '\t') return fail(400, "obsolete header line folding");
    const auto colon = h.find(':');
    if (colon == std::string_view::npos) return fail(400, "header line without ':'");
    const std::string_view name = h.substr(0, colon);
    if (!is_token(name)) return fail(400, "invalid header name");
    std::string key(name);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string_view value = trim(h.substr(colon + 1));
    auto [it, inserted] = req.headers.emplace(key, std::string(value));
    if (!inserted) {
      if (key == "host") return fail(400, "more than one Host header");
      it->second += ", ";
      it->second += value;
    }
  }
  // RFC 9112 3.2: a server must reject an HTTP/1.1 request without Host.
  if (req.version == "HTTP/1.1" && !req.headers.count("host")) {
    return fail(400, "HTTP/1.1 request without Host header");
  }
  ParseResult ok;
  ok.request = std::move(req);
  return ok;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string serialize_response(const Response& response, bool head_only,
                               const std::map<std::string, std::string>& extra_headers) {
  std::string out =
      "HTTP/1.1 " + std::to_string(response.status) + " " + reason_phrase(response.status) + "\r\n";
  out += "Content-Type: " + response.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  out += "Connection: close\r\n";
  for (const auto& [name, value] : extra_headers) out += name + ": " + value + "\r\n";
  out += "\r\n";
  if (!head_only) out += response.body;
  return out;
}

}  // namespace ddp3d::http
