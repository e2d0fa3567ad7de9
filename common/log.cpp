#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/local_time.h"

namespace ddp3d::log {
namespace {

struct State {
  std::mutex mutex;
  std::string prefix;
  Level level = Level::kInfo;
  State() {
    if (const char* env = std::getenv("DDP3D_LOG_LEVEL"); env && std::string_view(env) == "debug") {
      level = Level::kDebug;
    }
  }
};

State& state() {
  static State s;
  return s;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kDebug:
      return "DEBUG";
    case Level::kInfo:
      return "INFO";
    case Level::kWarning:
      return "WARNING";
    case Level::kError:
      return "ERROR";
  }
  return "?";
}

}  // namespace

void set_prefix(std::string prefix) {
  std::lock_guard lock(state().mutex);
  state().prefix = std::move(prefix);
}

void set_level(Level level) {
  std::lock_guard lock(state().mutex);
  state().level = level;
}

void write(Level level, std::string_view message) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (level < s.level) return;
  const std::string stamp = format_local_now("%m/%d %H:%M:%S");
  std::fprintf(stderr, "%s %s%s%s - %.*s\n", stamp.c_str(), s.prefix.c_str(),
               s.prefix.empty() ? "" : " ", level_name(level), static_cast<int>(message.size()),
               message.data());
  std::fflush(stderr);
}

}  // namespace ddp3d::log
