// Checkpoint files: atomic writes, corruption detection, resume selection, keep-last-K, and the
// model/optimizer/state round trip.
#include "worker/engine/checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>
#include <unistd.h>

#include <fstream>

#include "worker/engine/checkpoint_file.h"
#include "worker/engine/toy/toy_regressor.h"

namespace ddp3d::engine {
namespace {
namespace fs = std::filesystem;

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ddp3d_ckpt_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

void write_raw(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

std::string read_raw(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Crc32, KnownValue) {
  // The standard check value of CRC-32/ISO-HDLC.
  EXPECT_EQ(crc32("123456789", 9), 0xCBF43926u);
}

TEST_F(CheckpointTest, RoundTripsPayloadAndLeavesNoTempFile) {
  const fs::path p = dir_ / "epoch_1.pth";
  write_checkpoint_file(p, std::string("payload\0with nul", 16));
  EXPECT_EQ(read_checkpoint_file(p), std::string("payload\0with nul", 16));
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
}

TEST_F(CheckpointTest, CrashLeftoverTempFileIsIgnored) {
  write_checkpoint_file(dir_ / "epoch_1.pth", "one");
  // A writer killed mid-write leaves only its temp file: never a checkpoint candidate.
  write_raw(dir_ / ".epoch_2.pth.tmp-12345", "DDP3DCK1\x10\x00\x00");
  EXPECT_EQ(list_checkpoints(dir_), std::vector<fs::path>{dir_ / "epoch_1.pth"});
  EXPECT_EQ(find_resume_checkpoint(dir_, nullptr), dir_ / "epoch_1.pth");
  // Overwriting an existing checkpoint replaces it whole.
  write_checkpoint_file(dir_ / "epoch_1.pth", "two");
  EXPECT_EQ(read_checkpoint_file(dir_ / "epoch_1.pth"), "two");
}

TEST_F(CheckpointTest, CorruptFilesGiveErrorsNamingThem) {
  const fs::path p = dir_ / "epoch_3.pth";
  write_checkpoint_file(p, std::string(1000, 'x'));
  const std::string good = read_raw(p);

  write_raw(p, good.substr(0, good.size() / 2));  // truncated
  try {
    read_checkpoint_file(p);
    FAIL();
  } catch (const CorruptCheckpoint& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  std::string flipped = good;
  flipped[500] ^= 0x01;  // one bit
  write_raw(p, flipped);
  try {
    read_checkpoint_file(p);
    FAIL();
  } catch (const CorruptCheckpoint& e) {
    EXPECT_NE(std::string(e.what()).find("CRC"), std::string::npos) << e.what();
  }
  write_raw(p, "PK\x03\x04 a zip, not ours");
  EXPECT_THROW(read_checkpoint_file(p), CorruptCheckpoint);
  EXPECT_THROW(read_checkpoint_file(dir_ / "missing.pth"), CorruptCheckpoint);
}

TEST_F(CheckpointTest, AutoResumeFallsBackPastCorruptNewest) {
  write_checkpoint_file(dir_ / "epoch_1.pth", "e1");
  write_checkpoint_file(dir_ / "epoch_2.pth", "e2");
  write_checkpoint_file(dir_ / "epoch_10.pth", "e10");
  EXPECT_EQ(find_resume_checkpoint(dir_, nullptr), dir_ / "epoch_10.pth");  // numeric order
  write_raw(dir_ / "epoch_10.pth", read_raw(dir_ / "epoch_10.pth").substr(0, 10));
  std::vector<std::string> warnings;
  EXPECT_EQ(find_resume_checkpoint(dir_, &warnings), dir_ / "epoch_2.pth");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("epoch_10.pth"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("falling back"), std::string::npos) << warnings[0];
  fs::remove(dir_ / "epoch_1.pth");
  fs::remove(dir_ / "epoch_2.pth");
  EXPECT_TRUE(find_resume_checkpoint(dir_, nullptr).empty());
}

TEST_F(CheckpointTest, KeepsTheLastK) {
  for (int e = 1; e <= 5; ++e)
    write_checkpoint_file(dir_ / ("epoch_" + std::to_string(e) + ".pth"), "x");
  write_raw(dir_ / "notes.txt", "not a checkpoint");
  const auto removed = remove_old_checkpoints(dir_, 2);
  EXPECT_EQ(removed.size(), 3u);
  EXPECT_EQ(list_checkpoints(dir_),
            (std::vector<fs::path>{dir_ / "epoch_5.pth", dir_ / "epoch_4.pth"}));
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
  EXPECT_TRUE(remove_old_checkpoints(dir_, -1).empty());  // -1 keeps all
}

TEST_F(CheckpointTest, WithItersPerEpochCheckpointsSortByTrainingProgress) {
  // 100 iterations per epoch: iter_250 (saved on SIGTERM inside epoch 3) is newer than
  // epoch_2 and older than epoch_3; epoch_2 and iter_200 are the same point (epoch first).
  for (const char* name : {"epoch_1.pth", "epoch_2.pth", "iter_200.pth", "iter_250.pth",
                           "epoch_3.pth", "iter_99999999999999999.pth"})
    write_checkpoint_file(dir_ / name, "x");
  EXPECT_EQ(list_checkpoints(dir_, 100),
            (std::vector<fs::path>{dir_ / "iter_99999999999999999.pth", dir_ / "epoch_3.pth",
                                   dir_ / "iter_250.pth", dir_ / "epoch_2.pth",
                                   dir_ / "iter_200.pth", dir_ / "epoch_1.pth"}));
  fs::remove(dir_ / "iter_99999999999999999.pth");
  fs::remove(dir_ / "epoch_3.pth");
  EXPECT_EQ(find_resume_checkpoint(dir_, nullptr, 100), dir_ / "iter_250.pth");
  // Without it (the old order), every epoch file ranks first.
  EXPECT_EQ(find_resume_checkpoint(dir_, nullptr), dir_ / "epoch_2.pth");
  EXPECT_EQ(remove_old_checkpoints(dir_, 2, 100),
            (std::vector<fs::path>{dir_ / "iter_200.pth", dir_ / "epoch_1.pth"}));
}

TEST_F(CheckpointTest, LastCheckpointFileNamesTheNewest) {
  write_last_checkpoint(dir_, dir_ / "epoch_4.pth");
  EXPECT_EQ(read_raw(dir_ / "last_checkpoint"), (dir_ / "epoch_4.pth").string());
}

TEST_F(CheckpointTest, ModelOptimizerAndStateRoundTrip) {
  auto model = std::make_shared<ToyRegressor>(3, std::vector<std::int64_t>{4}, 1);
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  // One step so the optimizer has momentum buffers worth saving.
  model->forward(at::ones({2, 3})).sum().backward();
  opt.step();
  TrainingState state;
  state.epoch = 2;
  state.iter = 64;
  state.loss_scale = 1024;
  state.scale_growth_tracker = 7;
  state.seed = 42;
  state.world_size = 2;
  state.batch_world_size = 3;
  state.batch_size = 16;
  state.torch_rng_state = at::detail::getDefaultCPUGenerator().get_state();
  const fs::path p = dir_ / "epoch_2.pth";
  write_checkpoint_file(p, serialize_checkpoint(*model, opt, state));

  auto other = std::make_shared<ToyRegressor>(3, std::vector<std::int64_t>{4}, 1);
  torch::optim::SGD other_opt(other->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  TrainingState loaded;
  deserialize_checkpoint(read_checkpoint_file(p), p.string(), *other, &other_opt, &loaded);
  const auto a = model->parameters();
  const auto b = other->parameters();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i]));
  EXPECT_EQ(loaded.epoch, 2);
  EXPECT_EQ(loaded.iter, 64);
  EXPECT_EQ(loaded.loss_scale, 1024);
  EXPECT_EQ(loaded.scale_growth_tracker, 7);
  EXPECT_EQ(loaded.seed, 42);
  EXPECT_EQ(loaded.world_size, 2);
  EXPECT_EQ(loaded.batch_world_size, 3);
  EXPECT_EQ(loaded.batch_size, 16);
  EXPECT_TRUE(at::equal(loaded.torch_rng_state, state.torch_rng_state));
  // The momentum buffers came back: one more identical step keeps the models identical.
  opt.zero_grad();
  for (auto* m : {model.get(), other.get()}) m->forward(at::ones({2, 3})).sum().backward();
  opt.step();
  other_opt.step();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i]));

  // A checkpoint of another architecture is refused with the file named.
  auto wrong = std::make_shared<ToyRegressor>(5, std::vector<std::int64_t>{4}, 1);
  try {
    deserialize_checkpoint(read_checkpoint_file(p), p.string(), *wrong, nullptr, nullptr);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("layers.0.weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ddp3d::engine
