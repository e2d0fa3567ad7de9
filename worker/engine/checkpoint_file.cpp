#include "worker/engine/checkpoint_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace ddp3d::engine {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'D', 'D', 'P', '3', 'D', 'C', 'K', '1'};
constexpr std::size_t kHeader = sizeof(kMagic) + sizeof(std::uint64_t);

std::string errno_text() {
  return std::strerror(errno);
}

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t get_le(const std::string& in, std::size_t pos, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  }
  return v;
}

void write_all(int fd, const std::string& data, const fs::path& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("writing " + path.string() + ": " + errno_text());
    }
    done += static_cast<std::size_t>(n);
  }
}

void fsync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) throw std::runtime_error("opening directory " + dir.string() + ": " + errno_text());
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error("fsync of " + dir.string() + ": " + errno_text());
}

struct Entry {
  fs::path path;
  int kind;  // 0 epoch, 1 iter
  long long number;
};

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& bytes) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::path tmp =
      dir / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("creating " + tmp.string() + ": " + errno_text());
  try {
    write_all(fd, bytes, tmp);
    if (::fsync(fd) != 0)
      throw std::runtime_error("fsync of " + tmp.string() + ": " + errno_text());
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw std::runtime_error("renaming " + tmp.string() + " to " + path.string() + ": " + why);
  }
  fsync_dir(dir);
}

std::uint32_t crc32(const void* data, std::size_t size) {
  // Reflected CRC-32 (polynomial 0xEDB88320), the one zlib and zip use.
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void write_checkpoint_file(const fs::path& path, const std::string& payload) {
  std::string bytes(kMagic, sizeof(kMagic));
  bytes.reserve(kHeader + payload.size() + 4);
  put_le(bytes, payload.size(), 8);
  bytes += payload;
  put_le(bytes, crc32(payload.data(), payload.size()), 4);
  write_file_atomically(path, bytes);
}

std::string read_checkpoint_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorruptCheckpoint("checkpoint " + path.string() + " cannot be opened");
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  const std::string where = "checkpoint " + path.string() + " is corrupt: ";
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    throw CorruptCheckpoint(where + "not a ddp3d checkpoint (bad header)");
  }
  const std::uint64_t length = get_le(bytes, sizeof(kMagic), 8);
  if (bytes.size() != kHeader + length + 4) {
    throw CorruptCheckpoint(where + "truncated or padded (" + std::to_string(bytes.size()) +
                            " bytes, expected " + std::to_string(kHeader + length + 4) + ")");
  }
  std::string payload = bytes.substr(kHeader, length);
  const auto stored = static_cast<std::uint32_t>(get_le(bytes, kHeader + length, 4));
  if (crc32(payload.data(), payload.size()) != stored) {
    throw CorruptCheckpoint(where + "CRC mismatch (contents damaged)");
  }
  return payload;
}

std::vector<fs::path> list_checkpoints(const fs::path& dir) {
  static const std::regex pattern(R"((epoch|iter)_(\d+)\.pth)");
  std::vector<Entry> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !std::regex_match(name, m, pattern)) continue;
    entries.push_back({e.path(), m[1] == "epoch" ? 0 : 1, std::stoll(m[2])});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.number > b.number;
  });
  std::vector<fs::path> out;
  for (const Entry& e : entries) out.push_back(e.path);
  return out;
}

std::vector<fs::path> remove_old_checkpoints(const fs::path& dir, int keep) {
  std::vector<fs::path> removed;
  if (keep <= 0) return removed;
  const std::vector<fs::path> all = list_checkpoints(dir);
  for (std::size_t i = static_cast<std::size_t>(keep); i < all.size(); ++i) {
    std::error_code ec;
    if (fs::remove(all[i], ec)) removed.push_back(all[i]);
  }
  return removed;
}

void write_last_checkpoint(const fs::path& dir, const fs::path& checkpoint) {
  write_file_atomically(dir / "last_checkpoint", checkpoint.string());
}

}  // namespace ddp3d::engine
