#include "operator/kube/errors.h"

#include <cpprest/json.h>

#include <utility>

namespace ddp3d::kube {
namespace {

// The reason the API server would use for a bare status code (k8s.io/apimachinery's
// StatusReason values), for answers that carry no Status object.
std::string reason_for_code(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return code >= 500 ? "InternalError" : "Unknown";
  }
}

std::string string_field(const web::json::value& obj, const char* key) {
  if (obj.is_object() && obj.has_string_field(key)) return obj.at(key).as_string();
  return {};
}

}  // namespace

ApiStatus parse_api_status(int http_status, std::string_view body) {
  ApiStatus status;
  status.http_status = http_status;
  status.code = http_status;
  web::json::value parsed;
  bool is_status = false;
  if (!body.empty()) {
    std::error_code ec;
    parsed = web::json::value::parse(std::string(body), ec);
    is_status = !ec && parsed.is_object() && string_field(parsed, "kind") == "Status";
  }
  if (is_status) {
    status.reason = string_field(parsed, "reason");
    status.message = string_field(parsed, "message");
    if (parsed.has_integer_field("code")) status.code = parsed.at("code").as_integer();
  } else {
    constexpr std::size_t kMaxBody = 512;
    status.message = std::string(body.substr(0, kMaxBody));
    if (body.size() > kMaxBody) status.message += "...";
  }
  if (status.reason.empty()) status.reason = reason_for_code(http_status);
  return status;
}

namespace {
std::string describe(const ApiStatus& s, const std::string& verb, const std::string& path) {
  std::string text = verb + " " + path + ": " + std::to_string(s.http_status) + " " + s.reason;
  if (!s.message.empty()) text += ": " + s.message;
  return text;
}
}  // namespace

ApiError::ApiError(ApiStatus status, std::string verb, std::string path)
    : std::runtime_error(describe(status, verb, path)),
      status_(std::move(status)),
      verb_(std::move(verb)),
      path_(std::move(path)) {}

void throw_api_error(ApiStatus status, std::string verb, std::string path) {
  ApiError probe(status, verb, path);
  if (probe.is_not_found())
    throw NotFoundError(std::move(status), std::move(verb), std::move(path));
  if (probe.is_already_exists())
    throw AlreadyExistsError(std::move(status), std::move(verb), std::move(path));
  if (probe.is_conflict()) throw ConflictError(std::move(status), std::move(verb), std::move(path));
  if (probe.is_gone()) throw GoneError(std::move(status), std::move(verb), std::move(path));
  throw probe;
}

}  // namespace ddp3d::kube
