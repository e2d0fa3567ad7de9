// libFuzzer: a config file's text (and, after a line "---cfg-options---", one --cfg-options
// entry per line) through the whole loader: YAML, _base_, overrides, schema, cross-key checks.
// A ConfigError (or any std::exception) is the expected answer to garbage; a crash, a sanitizer
// report, a timeout or an allocation past -rss_limit_mb is a finding.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "worker/components/builtin_components.h"
#include "worker/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool registered = [] {
    ddp3d::components::register_builtin_schemas();
    return true;
  }();
  (void)registered;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSplit = "\n---cfg-options---\n";
  const auto split = input.find(kSplit);
  const std::string_view yaml = input.substr(0, split);
  std::vector<std::string> options;
  if (split != std::string_view::npos) {
    std::string_view rest = input.substr(split + kSplit.size());
    while (!rest.empty() && options.size() < 64) {
      const auto nl = rest.find('\n');
      options.emplace_back(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    }
  }
  try {
    // _base_ paths resolve under a folder that does not exist: a base is then a missing file
    // (absolute ones are read through the bounded reader like any config).
    (void)ddp3d::config::parse(yaml, "<fuzz>", options, "/nonexistent/ddp3d-fuzz");
  } catch (const std::exception&) {
  }
  return 0;
}
