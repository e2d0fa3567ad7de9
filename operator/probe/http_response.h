// The body of an HTTP/1.x response read whole from a pod (the progress probe's /metrics
// answer), pure so hostile answers are unit-tested: a status other than 200, a malformed
// status line or header block, chunked bodies (decoded), a Content-Length the data does not
// reach, or a body over the limit is an error that says which.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ddp3d::op::probe {

struct HttpBody {
  std::string error;  // "" on success
  std::string body;
};

// `raw` is everything the server sent before closing (HTTP/1.0 request, Connection: close).
HttpBody parse_http_response(std::string_view raw, std::size_t max_body_bytes);

}  // namespace ddp3d::op::probe
