#include "worker/cli/output_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ddp3d::cli {

void prepare_output_dir(std::string_view flag, const std::filesystem::path& dir) {
  const std::string where = std::string(flag) + " " + dir.string() + ": ";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(where + "cannot create it: " + ec.message());
  if (!std::filesystem::is_directory(dir, ec)) throw std::runtime_error(where + "not a folder");
  // Writable for real (permissions, a read-only mount, a full disk): a probe file per process.
  const std::filesystem::path probe = dir / (".ddp3d-probe-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(where + "cannot write there: " + std::strerror(errno));
  ::close(fd);
  std::filesystem::remove(probe, ec);
}

}  // namespace ddp3d::cli
