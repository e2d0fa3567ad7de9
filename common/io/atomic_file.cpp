#include "common/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/io/regular_file.h"
#include "common/random_hex.h"

namespace ddp3d::io {
namespace fs = std::filesystem;
namespace {

std::string errno_text(int e) {
  return std::strerror(e);
}

// Unique per process and call, so concurrent writers of one path never share a temp file:
// also processes on other machines or in other pods writing to one shared volume, where
// process ids repeat (every pod's first process is pid 1).
fs::path temp_path_for(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  static const std::string process_tag = random_hex(6, "a temporary file name");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  return dir / ("." + path.filename().string() + ".tmp-" + process_tag + "-" +
                std::to_string(counter.fetch_add(1)));
}

void write_all(int fd, std::string_view data, const fs::path& tmp) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(tmp.string(), "write failed: " + errno_text(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw FileError(dir.string(), "cannot open directory: " + errno_text(errno));
  const int rc = ::fsync(fd);
  const int e = errno;
  ::close(fd);
  // Some file systems (e.g. certain FUSE mounts) cannot fsync a directory; the data is safe.
  if (rc != 0 && e != EINVAL && e != ENOTSUP) {
    throw FileError(dir.string(), "fsync of the directory failed: " + errno_text(e));
  }
}

}  // namespace

void write_file_atomically(const fs::path& path, std::string_view bytes) {
  if (path.filename().empty()) throw FileError(path.string(), "not a file name");
  // Only a regular file (or a link) is replaced: renaming over a device, a FIFO or a socket
  // would destroy it, and a directory cannot take a file's place.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    throw FileError(path.string(),
                    std::string("exists and is ") +
                        (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") +
                        "; not replacing it");
  }
  const fs::path tmp = temp_path_for(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw FileError(path.string(),
                    "cannot create temp file " + tmp.string() + ": " + errno_text(errno));
  }
  try {
    write_all(fd, bytes, tmp);
    if (::fsync(fd) != 0) throw FileError(tmp.string(), "fsync failed: " + errno_text(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // close() can report a deferred write error (NFS, quota): then the data is not on disk.
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw FileError(tmp.string(), "close failed: " + errno_text(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw FileError(path.string(),
                    "cannot rename " + tmp.string() + " into place: " + errno_text(e));
  }
  fsync_dir(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

}  // namespace ddp3d::io
