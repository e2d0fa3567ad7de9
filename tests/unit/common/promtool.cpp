#include "tests/unit/common/promtool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ddp3d::metrics::test {

std::string find_promtool() {
  if (const char* env = std::getenv("PROMTOOL")) {
    return env;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    const auto end = dirs.find(':', pos);
    const std::string dir =
        dirs.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    std::string candidate = (dir.empty() ? "." : dir) + "/promtool";
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == std::string::npos) {
      break;
    }
    pos = end + 1;
  }
  return "";
}

PromtoolRun promtool_check(const std::string& promtool, const std::string& text) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("ddp3d_promtool_" + std::to_string(::getpid()) + ".prom");
  std::ofstream(file) << text;
  const std::string cmd = "'" + promtool + "' check metrics < '" + file.string() + "' 2>&1";
  PromtoolRun run;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    return run;
  }
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof(buf), pipe)) {
    run.output.append(buf, n);
  }
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::filesystem::remove(file);
  return run;
}

}  // namespace ddp3d::metrics::test
