#include "common/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/io/unique_fd.h"

namespace ddp3d::io {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes,
                              std::string_view what) {
  const std::string name = path.string();
  const std::string kind(what);
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    throw FileError(name, "cannot open " + kind + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw FileError(name, "cannot stat " + kind + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw FileError(name, kind + " is " + kind_of(st.st_mode) + ", not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  auto over_limit = [&](const std::string& how_big) {
    std::string message = kind;
    message += how_big;
    message += ", over the limit of ";
    message += std::to_string(max_bytes);
    message += " bytes";
    return FileError(name, message);
  };
  if (size > max_bytes) throw over_limit(" is " + std::to_string(size) + " bytes");
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(size));
  std::size_t done = 0;
  // Reads to EOF: the size is a hint (a file may still be growing); the limit is the bound.
  for (;;) {
    if (done == bytes.size()) {
      if (bytes.size() > max_bytes) throw over_limit(" grew while being read");
      bytes.resize(std::min<std::uint64_t>(max_bytes + 1, bytes.size() + 64 * kKiB));
    }
    const ssize_t n = ::read(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(name, "cannot read " + kind + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done > max_bytes) throw over_limit(" grew while being read");
  bytes.resize(done);
  return bytes;
}

}  // namespace ddp3d::io
