// A POSIX shared-memory segment (shm_open + mmap), owned as one RAII object.
#pragma once

#include <cstddef>
#include <string>

namespace ddp3d::dist {

class SharedMemorySegment {
 public:
  // Creates `name` (e.g. "/ddp3d-123-ab12") with `bytes` reserved up front (posix_fallocate,
  // so a full /dev/shm fails here with ENOSPC, not later with SIGBUS) and maps it.
  // Throws std::runtime_error naming the segment and the system error.
  static SharedMemorySegment create(const std::string& name, std::size_t bytes);
  // Maps an existing segment; throws when it is missing or smaller than `bytes`.
  static SharedMemorySegment open(const std::string& name, std::size_t bytes);

  SharedMemorySegment() = default;
  SharedMemorySegment(SharedMemorySegment&& other) noexcept;
  SharedMemorySegment& operator=(SharedMemorySegment&& other) noexcept;
  SharedMemorySegment(const SharedMemorySegment&) = delete;
  SharedMemorySegment& operator=(const SharedMemorySegment&) = delete;
  ~SharedMemorySegment();

  // Removes the name (once every rank has mapped it); the mapping stays valid, and the memory
  // is freed when the last process unmaps it, even if a process is killed.
  void unlink();

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  SharedMemorySegment(std::string name, void* data, std::size_t size, bool owner);
  std::string name_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  bool owner_ = false;  // created it, so unlinks it if still named at destruction
};

}  // namespace ddp3d::dist
