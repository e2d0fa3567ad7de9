// A string as a JSON string literal: quotes and backslashes escaped, control characters as
// \u00XX, everything else (UTF-8 included) as is.
#pragma once

#include <string>
#include <string_view>

namespace ddp3d {

std::string json_quoted(std::string_view s);

}  // namespace ddp3d
