#include "operator/kube/base64.h"

#include <stdexcept>

namespace ddp3d::kube {

std::string base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned int acc = 0;
  int bits = 0;
  std::size_t symbols = 0;
  std::size_t padding = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0)
      throw std::invalid_argument("invalid base64: data after '=' padding at offset " +
                                  std::to_string(i));
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else
      throw std::invalid_argument("invalid base64: unexpected character '" + std::string(1, c) +
                                  "' at offset " + std::to_string(i));
    acc = (acc << 6) | static_cast<unsigned int>(v);
    bits += 6;
    ++symbols;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  if (symbols % 4 == 1 || padding > 2 || (padding > 0 && (symbols + padding) % 4 != 0))
    throw std::invalid_argument("invalid base64: bad length (" + std::to_string(symbols) +
                                " symbols, " + std::to_string(padding) + " padding)");
  return out;
}

}  // namespace ddp3d::kube
