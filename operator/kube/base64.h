// Strict standard base64 decoding for kubeconfig *-data fields.
#pragma once

#include <string>
#include <string_view>

namespace ddp3d::kube {

// Decodes standard base64 (RFC 4648, '=' padding optional, whitespace ignored). Throws
// std::invalid_argument describing the first bad character or a bad length.
std::string base64_decode(std::string_view text);

}  // namespace ddp3d::kube
