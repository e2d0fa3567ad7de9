#include "worker/engine/checkpoint_file.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "common/io/atomic_file.h"
#include "common/io/regular_file.h"

namespace ddp3d::engine {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'D', 'D', 'P', '3', 'D', 'C', 'K', '1'};
constexpr std::size_t kHeader = sizeof(kMagic) + sizeof(std::uint64_t);

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

struct Entry {
  fs::path path;
  int kind;  // 0 epoch, 1 iter
  long long number;
};

// "epoch_<N>.pth" -> (0, N), "iter_<N>.pth" -> (1, N); nullopt for any other name, including
// a counter that does not fit (epoch_99999999999999999999.pth) or is not all digits.
std::optional<std::pair<int, long long>> parse_checkpoint_name(std::string_view name) {
  constexpr std::string_view kSuffix = ".pth";
  if (!name.ends_with(kSuffix)) return std::nullopt;
  name.remove_suffix(kSuffix.size());
  int kind = 0;
  if (name.starts_with("epoch_")) {
    name.remove_prefix(6);
  } else if (name.starts_with("iter_")) {
    name.remove_prefix(5);
    kind = 1;
  } else {
    return std::nullopt;
  }
  if (name.empty() ||
      !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  long long number = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return std::make_pair(kind, number);
}

}  // namespace

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
  io::write_file_atomically(path, bytes);
}

std::string read_checkpoint_file(const fs::path& path) {
  std::string bytes;
  try {
    bytes = io::read_regular_file(path, kMaxCheckpointBytes, "checkpoint");
  } catch (const io::FileError& e) {
    throw CorruptCheckpoint(std::string("checkpoint ") + e.what());
  }
  const std::string where = "checkpoint " + path.string() + " is corrupt: ";
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    throw CorruptCheckpoint(where + "not a ddp3d checkpoint (bad header)");
  }
  const std::uint64_t length = get_le(bytes, sizeof(kMagic), 8);
  // Compared without adding to `length` first: a forged length near 2^64 would wrap around.
  if (bytes.size() < kHeader + 4 || length != bytes.size() - kHeader - 4) {
    throw CorruptCheckpoint(where + "truncated or padded (" + std::to_string(bytes.size()) +
                            " bytes, the header announces a payload of " + std::to_string(length) +
                            " bytes)");
  }
  std::string payload = bytes.substr(kHeader, length);
  const auto stored = static_cast<std::uint32_t>(get_le(bytes, kHeader + length, 4));
  if (crc32(payload.data(), payload.size()) != stored) {
    throw CorruptCheckpoint(where + "CRC mismatch (contents damaged)");
  }
  return payload;
}

std::vector<fs::path> list_checkpoints(const fs::path& dir, std::int64_t iters_per_epoch) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (!e.is_regular_file(type_ec)) continue;
    if (const auto parsed = parse_checkpoint_name(e.path().filename().string())) {
      entries.push_back({e.path(), parsed->first, parsed->second});
    }
  }
  // Progress in iterations, saturating (a huge epoch counter must not wrap).
  const auto progress = [iters_per_epoch](const Entry& e) -> long double {
    return e.kind == 0
               ? static_cast<long double>(e.number) * static_cast<long double>(iters_per_epoch)
               : static_cast<long double>(e.number);
  };
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (iters_per_epoch > 0 && progress(a) != progress(b)) return progress(a) > progress(b);
    return a.kind != b.kind ? a.kind < b.kind : a.number > b.number;
  });
  std::vector<fs::path> out;
  for (const Entry& e : entries) out.push_back(e.path);
  return out;
}

std::vector<fs::path> remove_old_checkpoints(const fs::path& dir, int keep,
                                             std::int64_t iters_per_epoch) {
  std::vector<fs::path> removed;
  if (keep <= 0) return removed;
  const std::vector<fs::path> all = list_checkpoints(dir, iters_per_epoch);
  for (std::size_t i = static_cast<std::size_t>(keep); i < all.size(); ++i) {
    std::error_code ec;
    if (fs::remove(all[i], ec)) removed.push_back(all[i]);
  }
  return removed;
}

void write_last_checkpoint(const fs::path& dir, const fs::path& checkpoint) {
  io::write_file_atomically(dir / "last_checkpoint", checkpoint.string());
}

}  // namespace ddp3d::engine
