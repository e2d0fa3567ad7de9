// Checkpoint files on disk: an integrity-checked container written atomically, and the
// bookkeeping of a work dir's checkpoints (newest valid, keep the last K, `last_checkpoint`).
// Knows nothing of models: the payload is opaque bytes (checkpoint.h fills it).
//
// Container: "DDP3DCK1" | u64 payload length | payload | u32 CRC-32 of payload (little endian).
// A file cut short (crash during a non-atomic copy), overwritten or bit-flipped fails the
// length or CRC check with an error naming the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddp3d::engine {

class CorruptCheckpoint : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::uint32_t crc32(const void* data, std::size_t size);

// Writes the container to `path` atomically: a temp file in the same directory
// (".<name>.tmp-<pid>"), fsync, rename over `path`, fsync the directory. A crash at any point
// leaves either the old file or the new one, never a partial `path`. Throws std::runtime_error
// naming the path on I/O failure.
void write_checkpoint_file(const std::filesystem::path& path, const std::string& payload);

// Checkpoints larger than this are refused before a byte is read (a PointPillars checkpoint
// is ~60 MB; a sparse or runaway file must not be loaded into memory).
inline constexpr std::uint64_t kMaxCheckpointBytes = 16ULL * 1024 * 1024 * 1024;

// Reads and verifies the container; throws CorruptCheckpoint naming the file and what is wrong
// (missing, not a regular file, over kMaxCheckpointBytes, bad magic, truncated, CRC mismatch).
std::string read_checkpoint_file(const std::filesystem::path& path);

// Checkpoints of a work dir: files "epoch_<N>.pth" / "iter_<N>.pth", newest first. With
// `iters_per_epoch` (> 0), by training progress: epoch_<E> is E * iters_per_epoch iterations,
// iter_<N> is N (a checkpoint saved on SIGTERM), the epoch one first on a tie; without it,
// epoch files and iter files each by their own counter, epoch ones first. Temp files,
// directories and anything else are ignored, as are names whose counter is not a plain number
// that fits in 64 bits ("epoch_x.pth", "epoch_99999999999999999999.pth").
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& dir,
                                                    std::int64_t iters_per_epoch = 0);

// Deletes the oldest checkpoints so that at most `keep` remain (keep <= 0: keep all).
// Returns the deleted paths.
std::vector<std::filesystem::path> remove_old_checkpoints(const std::filesystem::path& dir,
                                                          int keep,
                                                          std::int64_t iters_per_epoch = 0);

// `<dir>/last_checkpoint` holds the path of the newest checkpoint (mmengine's convention);
// written atomically.
void write_last_checkpoint(const std::filesystem::path& dir,
                           const std::filesystem::path& checkpoint);

}  // namespace ddp3d::engine
