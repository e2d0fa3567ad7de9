// Runs the real `promtool check metrics` (Debian package prometheus, installed by
// tools/setup.sh) on an exposition, for the tests of every binary's /metrics.
#pragma once

#include <string>

namespace ddp3d::metrics::test {

// $PROMTOOL, else promtool on PATH; "" when there is none.
std::string find_promtool();

struct PromtoolRun {
  int exit_code = -1;
  std::string output;
};

// Feeds `text` to `promtool check metrics` on stdin; returns its exit code and output.
PromtoolRun promtool_check(const std::string& promtool, const std::string& text);

}  // namespace ddp3d::metrics::test
