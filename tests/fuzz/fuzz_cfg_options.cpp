// libFuzzer: --cfg-options entries, one per line, parsed and applied to a small tree (dotted
// keys, list indices, flow sequences and mappings as values).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "worker/config/loader.h"
#include "worker/config/overrides.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  try {
    ddp3d::config::Value root = ddp3d::config::load_tree_from_text(
        "a: {b: 1, c: [1, 2, {d: x}]}\nlist: [0, 1, 2]\nname: n\n", "<fuzz-base>", "/nonexistent");
    for (int n = 0; !rest.empty() && n < 32; ++n) {
      const auto nl = rest.find('\n');
      const std::string line(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
      try {
        ddp3d::config::apply_cfg_option(root, ddp3d::config::parse_cfg_option(line));
      } catch (const std::exception&) {
      }
    }
  } catch (const std::exception&) {
  }
  return 0;
}
