// Test helpers for the hostile-input tests: a scratch folder, FIFOs, sparse files, and a read
// run under a deadline so that a reader that blocks on a FIFO fails the test instead of
// hanging it.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>

namespace ddp3d::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ddp3d-hostile-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path path(const std::string& relative) const { return root_ / relative; }

  std::filesystem::path write(const std::string& relative, const std::string& bytes) const {
    const std::filesystem::path p = root_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::filesystem::path fifo(const std::string& relative) const {
    const std::filesystem::path p = root_ / relative;
    std::filesystem::create_directories(p.parent_path());
    if (::mkfifo(p.c_str(), 0644) != 0) throw std::runtime_error("mkfifo failed");
    return p;
  }
  // A file of `bytes` bytes that occupies (almost) no disk.
  std::filesystem::path sparse(const std::string& relative, std::uint64_t bytes) const {
    const std::filesystem::path p = write(relative, "");
    if (::truncate(p.c_str(), static_cast<off_t>(bytes)) != 0) {
      throw std::runtime_error("truncate failed");
    }
    return p;
  }

 private:
  std::filesystem::path root_;
};

// Runs `read` (which must throw) on another thread and returns the exception's message, or
// "no error". When it has not finished within `deadline` (a reader blocked in open() or read()
// of `fifo`), the FIFO is opened for writing and closed, which releases the reader, and
// "HUNG" is returned so that the test fails with a clear message.
inline std::string message_within(const std::function<void()>& read,
                                  const std::filesystem::path& fifo,
                                  std::chrono::seconds deadline = std::chrono::seconds(10)) {
  auto done = std::async(std::launch::async, [&]() -> std::string {
    try {
      read();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  });
  if (done.wait_for(deadline) == std::future_status::ready) return done.get();
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  done.wait();
  return "HUNG: the read did not return within the deadline";
}

}  // namespace ddp3d::testing
