#include "worker/visual/tensorboard_event_writer.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/visual/crc32c.h"
#include "worker/visual/png_codec.h"
#include "worker/visual/tensorboard_event.pb.h"
#include "worker/visual/tfrecord.h"

namespace ddp3d::visual {
namespace {

namespace pb = ddp3d::tensorboard;

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(""), 0x00000000U);
  EXPECT_EQ(crc32c("123456789"), 0xE3069283U);
  EXPECT_EQ(crc32c("a"), 0xC1D04330U);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAU);  // RFC 3720 B.4: 32 zero bytes
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43U);
  const std::uint32_t crc = 0xE3069283U;
  EXPECT_EQ(masked_crc32c("123456789"), ((crc >> 15) | (crc << 17)) + 0xa282ead8U);
}

TEST(TfRecord, FramingIsLengthCrcDataCrc) {
  const std::string framed = frame_tfrecord("abc");
  ASSERT_EQ(framed.size(), 3U + 16U);
  EXPECT_EQ(framed.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  const auto le32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 4; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(framed[at + i]);
    return v;
  };
  EXPECT_EQ(le32(8), masked_crc32c(framed.substr(0, 8)));
  EXPECT_EQ(framed.substr(12, 3), "abc");
  EXPECT_EQ(le32(15), masked_crc32c("abc"));
  EXPECT_EQ(read_tfrecords(framed + frame_tfrecord("") + frame_tfrecord("de")),
            (std::vector<std::string>{"abc", "", "de"}));
}

TEST(TfRecord, TruncatedOrCorruptFilesAreErrorsNamingTheRecord) {
  const std::string two = frame_tfrecord("first") + frame_tfrecord("second");
  EXPECT_THROW(read_tfrecords(two.substr(0, two.size() - 1)), std::runtime_error);
  EXPECT_THROW(read_tfrecords(two.substr(0, 5)), std::runtime_error);
  std::string flipped = two;
  flipped[21 + 14] ^= 1;  // a byte of the second record's data
  try {
    read_tfrecords(flipped);
    FAIL() << "a flipped byte was not detected";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("TFRecord 1 at byte 21: data checksum"), std::string::npos)
        << e.what();
  }
  std::string huge_length = frame_tfrecord("x");
  huge_length[7] = '\x7f';  // length 2^62-ish: its checksum no longer matches
  EXPECT_THROW(read_tfrecords(huge_length), std::runtime_error);
}

TEST(PngHeader, SizeAndColorspaceFromIhdrAndGarbageRefused) {
  const PngHeader h = read_png_header(encode_png(RgbImage(7, 5, {1, 2, 3})));
  EXPECT_EQ(h.width, 7);
  EXPECT_EQ(h.height, 5);
  EXPECT_EQ(h.colorspace, 3);
  EXPECT_THROW(read_png_header(""), std::invalid_argument);
  EXPECT_THROW(read_png_header("GIF89a and then some more bytes to pass the size check"),
               std::invalid_argument);
}

class EventWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ddp3d_tb_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::vector<pb::Event> read_events(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    std::vector<pb::Event> events;
    for (const std::string& record : read_tfrecords(bytes.str())) {
      pb::Event e;
      EXPECT_TRUE(e.ParseFromString(record));
      events.push_back(e);
    }
    return events;
  }

  std::filesystem::path dir_;
};

TEST_F(EventWriterTest, WritesFileVersionScalarsImagesAndSessionStartsParsedBack) {
  const std::string png = encode_png(RgbImage(4, 3, {10, 20, 30}));
  std::filesystem::path file;
  {
    TensorboardEventWriter writer(dir_ / "tb", nullptr);
    file = writer.file();
    writer.add_scalars({{"loss", 0.5}, {"lr", 1e-3}}, 8);
    writer.add_session_start(9);
    writer.add_image("val/bev", 16, png);
    // Flushed as written: readable before the writer is gone.
    EXPECT_EQ(read_events(file).size(), 4U);
  }
  EXPECT_EQ(file.parent_path(), dir_ / "tb");
  EXPECT_EQ(file.filename().string().rfind("events.out.tfevents.", 0), 0U) << file;
  const std::vector<pb::Event> events = read_events(file);
  ASSERT_EQ(events.size(), 4U);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GT(events[0].wall_time(), 1.5e9);

  ASSERT_TRUE(events[1].has_summary());
  EXPECT_EQ(events[1].step(), 8);
  ASSERT_EQ(events[1].summary().value_size(), 2);
  EXPECT_EQ(events[1].summary().value(0).tag(), "loss");
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 0.5F);
  EXPECT_EQ(events[1].summary().value(1).tag(), "lr");
  EXPECT_EQ(events[1].summary().value(1).simple_value(), 1e-3F);

  // On the wire as TensorFlow's event.proto has it: field 7 (0x3a), status START.
  std::ifstream in(file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string session_record = read_tfrecords(bytes.str()).at(2);
  EXPECT_TRUE(session_record.ends_with(std::string("\x3a\x02\x08\x01", 4)));
  ASSERT_TRUE(events[2].has_session_log());
  EXPECT_EQ(events[2].step(), 9);
  EXPECT_EQ(events[2].session_log().status(), pb::SessionLog::START);

  ASSERT_TRUE(events[3].has_summary());
  EXPECT_EQ(events[3].step(), 16);
  const pb::Summary::Value& image = events[3].summary().value(0);
  EXPECT_EQ(image.tag(), "val/bev");
  ASSERT_TRUE(image.has_image());
  EXPECT_EQ(image.image().width(), 4);
  EXPECT_EQ(image.image().height(), 3);
  EXPECT_EQ(image.image().colorspace(), 3);
  EXPECT_EQ(image.image().encoded_image_string(), png);
}

TEST_F(EventWriterTest, EveryWriterGetsItsOwnFileInTheSameDirectory) {
  TensorboardEventWriter a(dir_, nullptr);
  TensorboardEventWriter b(dir_, nullptr);
  EXPECT_NE(a.file(), b.file());
  EXPECT_EQ(a.file().parent_path(), b.file().parent_path());
}

TEST_F(EventWriterTest, ANewFileSortsAfterEveryExistingOneWhateverTheClock) {
  // TensorBoard reads the files in name order: a later file named by an earlier second, or by
  // the same second and a smaller pid, would be read first and its session start purge nothing.
  std::filesystem::create_directories(dir_);
  const std::string future = "events.out.tfevents.4000000000.host.99999.0";
  std::ofstream(dir_ / future) << "";
  std::ofstream(dir_ / "events.out.tfevents.garbage") << "";
  TensorboardEventWriter writer(dir_, nullptr);
  EXPECT_GT(writer.file().filename().string(), future);
  EXPECT_EQ(writer.file().filename().string().rfind("events.out.tfevents.4000000001.", 0), 0U)
      << writer.file();
}

TEST_F(EventWriterTest, ANonPngImageIsRefusedAndTheFileStaysReadable) {
  TensorboardEventWriter writer(dir_, nullptr);
  EXPECT_THROW(writer.add_image("x", 1, "not a png"), std::invalid_argument);
  writer.add_scalars({{"a", 1.0}}, 1);
  EXPECT_EQ(read_events(writer.file()).size(), 2U);
}

TEST_F(EventWriterTest, AFailingWriteWarnsOnceAndDoesNotThrow) {
  // Linux always has /dev/full; without it this test could not show what it claims.
  ASSERT_TRUE(std::filesystem::exists("/dev/full")) << "this test needs /dev/full";
  std::filesystem::create_directories(dir_);
  std::vector<std::string> warnings;
  TensorboardEventWriter writer(dir_, [&](const std::string& w) { warnings.push_back(w); });
  // Point the stream at a device that is always full, as a filled disk would be.
  std::filesystem::remove(writer.file());
  std::filesystem::create_symlink("/dev/full", writer.file());
  for (int step = 1; step <= 3; ++step) EXPECT_NO_THROW(writer.add_scalars({{"a", 1.0}}, step));
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("cannot write to the TensorBoard event file"), std::string::npos);
}

TEST_F(EventWriterTest, ARecordCutShortByAFullDiskIsRemovedAndLaterRecordsStayReadable) {
  // A file size limit stands in for a full disk: the image's record is written in part. In a
  // child process, so the limit stays there.
  TensorboardEventWriter writer(dir_, nullptr);
  const auto header_size = static_cast<rlim_t>(std::filesystem::file_size(writer.file()));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails instead of killing
    const rlimit limit{header_size + 150, header_size + 150};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(2);
    int warnings = 0;
    TensorboardEventWriter limited(dir_ / "limited", [&](const std::string&) { ++warnings; });
    limited.add_scalars({{"a", 1.0}}, 1);
    limited.add_image("big", 2, encode_png(RgbImage(64, 64, {1, 2, 3})));
    limited.add_scalars({{"a", 3.0}}, 3);
    std::ifstream in(limited.file(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    try {
      const std::vector<std::string> records = read_tfrecords(bytes.str());
      _exit(records.size() == 3 && warnings == 1 ? 0 : 3);
    } catch (const std::exception&) {
      _exit(4);  // the cut record is still there
    }
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: setrlimit failed, 3: wrong records or warnings, 4: "
                                       "the partial record is still in the file";
}

TEST_F(EventWriterTest, AnUncreatableDirectoryIsAnErrorNamingIt) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  try {
    TensorboardEventWriter writer(dir_ / "file" / "tb", nullptr);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir_ / "file" / "tb").string()), std::string::npos);
  }
}

}  // namespace
}  // namespace ddp3d::visual
