// Errors raised by the Kubernetes client. An API server answer that is not 2xx becomes an
// ApiError carrying the HTTP status and the `reason`/`message` of the returned Status object;
// the reasons a controller branches on get their own subclass so they can be caught by type.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace ddp3d::kube {

// Bad or missing configuration (kubeconfig, in-cluster files); the message names file and key.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The request never got an HTTP answer: connection refused/reset, TLS failure, timeout.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a Status object (or a bare HTTP error) says; pure data, built by parse_api_status().
struct ApiStatus {
  int http_status = 0;  // e.g. 409
  std::string reason;   // e.g. "Conflict", "AlreadyExists", "NotFound", "Expired", "Gone"
  std::string message;  // the server's human-readable message
  int code = 0;         // Status.code (normally equal to http_status)
};

// Maps an HTTP status and response body to ApiStatus. A body that is not a Status object
// (proxies, HTML pages) still yields the status and a reason derived from the status code,
// with the body text (truncated) as message.
ApiStatus parse_api_status(int http_status, std::string_view body);

class ApiError : public std::runtime_error {
 public:
  // `what` is built as "<verb> <path>: <status> <reason>: <message>".
  ApiError(ApiStatus status, std::string verb, std::string path);
  const ApiStatus& status() const { return status_; }
  int http_status() const { return status_.http_status; }
  const std::string& reason() const { return status_.reason; }
  const std::string& message() const { return status_.message; }
  const std::string& verb() const { return verb_; }
  const std::string& path() const { return path_; }

  bool is_not_found() const { return status_.http_status == 404; }
  bool is_already_exists() const {
    return status_.http_status == 409 && status_.reason == "AlreadyExists";
  }
  // Optimistic-concurrency failure (stale resourceVersion on update).
  bool is_conflict() const {
    return status_.http_status == 409 && status_.reason != "AlreadyExists";
  }
  // resourceVersion too old for a list/watch: the caller must re-list.
  bool is_gone() const {
    return status_.http_status == 410 || status_.reason == "Expired" || status_.reason == "Gone";
  }

 private:
  ApiStatus status_;
  std::string verb_;
  std::string path_;
};

class NotFoundError : public ApiError {
 public:
  using ApiError::ApiError;
};
class AlreadyExistsError : public ApiError {
 public:
  using ApiError::ApiError;
};
// 409 on replace/patch with a stale resourceVersion: re-read the object and retry.
class ConflictError : public ApiError {
 public:
  using ApiError::ApiError;
};
// 410 Gone / Expired: the requested resourceVersion has been compacted away.
class GoneError : public ApiError {
 public:
  using ApiError::ApiError;
};

// Throws the most specific ApiError subclass for `status`.
[[noreturn]] void throw_api_error(ApiStatus status, std::string verb, std::string path);

}  // namespace ddp3d::kube
