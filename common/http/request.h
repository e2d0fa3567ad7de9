// HTTP/1.x request head parsing (pure; no sockets), for the small server in server.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ddp3d::http {

struct Request {
  std::string method;                          // "GET", "HEAD", ...
  std::string target;                          // as sent, e.g. "/metrics?x=1"
  std::string path;                            // target without the query, e.g. "/metrics"
  std::string query;                           // after '?', without it; "" if none
  std::string version;                         // "HTTP/1.1" or "HTTP/1.0"
  std::map<std::string, std::string> headers;  // names lower-cased, values trimmed
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Outcome of parsing a request head (everything up to and including the blank line).
struct ParseResult {
  std::optional<Request> request;  // set on success
  int error_status = 0;            // 400 (malformed) or 505 (unsupported version) otherwise
  std::string error;               // human-readable reason
};

// Parses "METHOD SP target SP HTTP/1.x CRLF (header CRLF)* CRLF". Bare LF line ends are
// accepted, as most servers do.
ParseResult parse_request_head(std::string_view head);

// "200 OK", "404 Not Found", ...: the status line's reason phrase.
const char* reason_phrase(int status);

// Serializes a complete response with Content-Length and Connection: close. For HEAD
// requests (head_only) the body is left out but Content-Length still describes it.
std::string serialize_response(const Response& response, bool head_only,
                               const std::map<std::string, std::string>& extra_headers = {});

}  // namespace ddp3d::http
