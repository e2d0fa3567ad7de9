// Line-oriented logging to stderr with a per-process prefix (e.g. "[rank 1]"), so the
// interleaved output of several ranks stays attributable.
#pragma once

#include <string>
#include <string_view>

namespace ddp3d::log {

enum class Level { kDebug, kInfo, kWarning, kError };

// Sets the prefix printed after the timestamp on every line of this process.
void set_prefix(std::string prefix);
// Lines below this level are dropped. Default kInfo; DDP3D_LOG_LEVEL=debug lowers it.
void set_level(Level level);
void write(Level level, std::string_view message);

inline void debug(std::string_view m) {
  write(Level::kDebug, m);
}
inline void info(std::string_view m) {
  write(Level::kInfo, m);
}
inline void warning(std::string_view m) {
  write(Level::kWarning, m);
}
inline void error(std::string_view m) {
  write(Level::kError, m);
}

}  // namespace ddp3d::log
