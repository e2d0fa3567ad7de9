// A file descriptor owned by one object: closed when it goes out of scope, on every path out.
#pragma once

#include <unistd.h>

namespace ddp3d::io {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // For calls that fill in a descriptor (pipe2 and the like); the old one must be closed.
  int* out() { return &fd_; }

 private:
  int fd_ = -1;
};

}  // namespace ddp3d::io
