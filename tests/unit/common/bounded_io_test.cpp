// common/io: reads refuse FIFOs, directories, devices and oversized files without blocking or
// allocating; atomic writes leave no empty or partial file when the disk is full.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "common/io/atomic_file.h"
#include "common/io/regular_file.h"
#include "hostile_files.h"

namespace ddp3d::io {
namespace {

using ddp3d::testing::message_within;
using ddp3d::testing::ScratchDir;
namespace fs = std::filesystem;

std::string read_error(const fs::path& path, std::uint64_t limit) {
  try {
    read_regular_file(path, limit, "test file");
  } catch (const FileError& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ReadRegularFile, ReadsAWholeFileUpToTheLimit) {
  ScratchDir dir;
  const std::string bytes(100000, 'x');
  EXPECT_EQ(read_regular_file(dir.write("a.bin", bytes), 100000, "test file"), bytes);
  EXPECT_EQ(read_regular_file(dir.write("empty", ""), 0, "test file"), "");
}

TEST(ReadRegularFile, AFileOverTheLimitNamesPathKindAndLimit) {
  ScratchDir dir;
  const fs::path p = dir.write("big.txt", std::string(1025, 'x'));
  const std::string m = read_error(p, 1024);
  EXPECT_TRUE(contains(m, p.string())) << m;
  EXPECT_TRUE(contains(m, "test file is 1025 bytes, over the limit of 1024 bytes")) << m;
}

TEST(ReadRegularFile, AHugeSparseFileFailsBeforeAnyByteIsRead) {
  ScratchDir dir;
  const fs::path p = dir.sparse("sparse.bin", std::uint64_t{64} << 30);  // 64 GiB of holes
  const auto start = std::chrono::steady_clock::now();
  const std::string m = read_error(p, kGiB);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(contains(m, "68719476736 bytes, over the limit of 1073741824 bytes")) << m;
}

TEST(ReadRegularFile, AFifoWithoutWriterFailsAtOnce) {
  ScratchDir dir;
  const fs::path fifo = dir.fifo("pipe");
  const std::string m = message_within([&] { read_regular_file(fifo, kMiB, "config file"); }, fifo);
  EXPECT_TRUE(contains(m, fifo.string() + ": config file is a FIFO, not a regular file")) << m;
}

TEST(ReadRegularFile, DirectoriesAndDevicesAreNotRead) {
  ScratchDir dir;
  EXPECT_TRUE(contains(read_error(dir.root(), kMiB), "is a directory, not a regular file"));
  const std::string zero = read_error("/dev/zero", kMiB);
  EXPECT_TRUE(contains(zero, "/dev/zero: test file is a character device")) << zero;
  EXPECT_TRUE(contains(read_error("/dev/null", kMiB), "character device"));
}

TEST(ReadRegularFile, AMissingFileSaysSo) {
  const std::string m = read_error("/nonexistent/x.yaml", kMiB);
  EXPECT_TRUE(contains(m, "/nonexistent/x.yaml: cannot open test file: No such file")) << m;
}

std::size_t entries_in(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteFileAtomically, ReplacesTheFileAndLeavesNoTempFile) {
  ScratchDir dir;
  const fs::path p = dir.write("data.txt", "old");
  write_file_atomically(p, "new contents");
  EXPECT_EQ(read_regular_file(p, kMiB, "test file"), "new contents");
  EXPECT_EQ(entries_in(dir.root()), 1u);
}

// In the forked child: exits 0 when both writes failed with an error naming their file.
[[noreturn]] void write_both_with_a_full_disk(const fs::path& existing, const fs::path& fresh) {
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{4096, 4096};
  setrlimit(RLIMIT_FSIZE, &limit);
  int failures = 0;
  for (const fs::path& p : {existing, fresh}) {
    try {
      write_file_atomically(p, std::string(1 << 20, 'x'));
    } catch (const FileError& e) {
      failures += contains(e.what(), p.filename().string()) ? 1 : 0;
    }
  }
  std::exit(failures == 2 ? 0 : 1);
}

// A full disk, simulated by a file-size limit in a forked child (SIGXFSZ ignored, so write()
// fails with EFBIG as it fails with ENOSPC on a full file system): the write fails naming the
// file, the old contents stay, no empty file is renamed into place and no temp file is left.
TEST(WriteFileAtomically, AFullDiskLeavesTheOldFileAndNoTempFile) {
  ScratchDir dir;
  const fs::path existing = dir.write("labels.txt", "old labels");
  const fs::path fresh = dir.path("velodyne.bin");
  EXPECT_EXIT(write_both_with_a_full_disk(existing, fresh), ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(read_regular_file(existing, kMiB, "test file"), "old labels");
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_EQ(entries_in(dir.root()), 1u) << "a temp file was left behind";
}

TEST(WriteFileAtomically, FailuresNameThePathAndCleanUp) {
  ScratchDir dir;
  fs::create_directories(dir.path("taken/sub"));
  EXPECT_THROW(write_file_atomically(dir.path("missing/dir/x.txt"), "x"), FileError);
  try {
    write_file_atomically(dir.path("taken"), "x");  // a directory cannot be replaced
    ADD_FAILURE() << "no error";
  } catch (const FileError& e) {
    EXPECT_TRUE(contains(e.what(), dir.path("taken").string())) << e.what();
  }
  EXPECT_EQ(entries_in(dir.root()), 1u);
}

TEST(WriteFileAtomically, NeverReplacesADeviceOrAFifo) {
  ScratchDir dir;
  const fs::path fifo = dir.fifo("pipe");
  try {
    write_file_atomically(fifo, "x");
    ADD_FAILURE() << "no error";
  } catch (const FileError& e) {
    EXPECT_TRUE(contains(e.what(), fifo.string() + ": exists and is not a regular file"))
        << e.what();
  }
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries_in(dir.root()), 1u);
}

}  // namespace
}  // namespace ddp3d::io
