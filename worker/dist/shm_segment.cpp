#include "worker/dist/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace ddp3d::dist {

namespace {

std::runtime_error segment_error(const std::string& what, const std::string& name, int err) {
  return std::runtime_error(what + " shared-memory segment " + name + " (/dev/shm" + name +
                            "): " + std::strerror(err));
}

void* map(int fd, const std::string& name, std::size_t bytes) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) throw segment_error("cannot map", name, errno);
  return data;
}

}  // namespace

SharedMemorySegment::SharedMemorySegment(std::string name, void* data, std::size_t size, bool owner)
    : name_(std::move(name)), data_(data), size_(size), owner_(owner) {}

SharedMemorySegment SharedMemorySegment::create(const std::string& name, std::size_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw segment_error("cannot create", name, errno);
  // posix_fallocate returns the error instead of setting errno.
  if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    close(fd);
    shm_unlink(name.c_str());
    throw segment_error("cannot reserve " + std::to_string(bytes) + " bytes for", name, err);
  }
  void* data = nullptr;
  try {
    data = map(fd, name, bytes);
  } catch (...) {
    close(fd);
    shm_unlink(name.c_str());
    throw;
  }
  close(fd);
  return SharedMemorySegment(name, data, bytes, true);
}

SharedMemorySegment SharedMemorySegment::open(const std::string& name, std::size_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) throw segment_error("cannot open", name, errno);
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < bytes) {
    close(fd);
    throw std::runtime_error("shared-memory segment " + name + " is smaller than the " +
                             std::to_string(bytes) + " bytes expected");
  }
  void* data = nullptr;
  try {
    data = map(fd, name, bytes);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  return SharedMemorySegment(name, data, bytes, false);
}

SharedMemorySegment::SharedMemorySegment(SharedMemorySegment&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owner_(std::exchange(other.owner_, false)) {}

SharedMemorySegment& SharedMemorySegment::operator=(SharedMemorySegment&& other) noexcept {
  if (this != &other) {
    this->~SharedMemorySegment();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
  }
  return *this;
}

SharedMemorySegment::~SharedMemorySegment() {
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  unlink();
}

void SharedMemorySegment::unlink() {
  if (owner_) shm_unlink(name_.c_str());
  owner_ = false;
}

}  // namespace ddp3d::dist
