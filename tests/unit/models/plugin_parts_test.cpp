// Parts registered from this test target alone (schema + factory) train inside PointPillars by
// config: `ddp3d train` with model.voxel_encoder.type TinyVoxelEncoder,
// model.middle_encoder.type TinyScatter, model.backbone.type TinyBackbone, model.neck.type
// TinyNeck, or model.bbox_head.type TinyHead.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/unit/models/tiny_backbone.h"
#include "tests/unit/models/tiny_encoders.h"
#include "tests/unit/models/tiny_head.h"
#include "tests/unit/models/tiny_neck.h"
#include "worker/cli/train_test_commands.h"
#include "worker/components/builtin_components.h"

namespace ddp3d::testing {
namespace {
namespace fs = std::filesystem;

fs::path source_dir() {
  return ::ddp3d::testing::source_path(".");
}

const char* const kTinyEncoders =
    "  voxel_encoder: {_delete_: true, type: TinyVoxelEncoder, in_channels: 4,\n"
    "                  feat_channels: [32]}\n"
    "  middle_encoder: {_delete_: true, type: TinyScatter, in_channels: 32,\n"
    "                   output_shape: [128, 128]}\n";
const char* const kTinyBackbone =
    "  backbone: {_delete_: true, type: TinyBackbone, in_channels: 32,\n"
    "             out_channels: [32, 64, 128]}\n";
const char* const kTinyNeck =
    "  neck: {_delete_: true, type: TinyNeck, in_channels: [32, 64, 128],\n"
    "         out_channels: [64, 64, 64]}\n";
const char* const kTinyHead =
    "  bbox_head: {_delete_: true, type: TinyHead, in_channels: 192,\n"
    "              num_classes: 1}\n";

// The demo PointPillars with `model` (YAML lines under model:) swapped in, on a few synthetic
// scenes.
std::string config_text(const fs::path& data, const std::string& model) {
  const std::string demo =
      (source_dir() / "configs/pointpillars/pointpillars_demo_synthetic_car.yaml").string();
  const std::string dataset = "dataset: {data_root: " + data.string() + ", num_scenes: 10}";
  return "_base_: [" + demo + "]\n" + "model:\n" + model +
         "train_dataloader: {batch_size: 2, num_workers: 0, " + dataset + "}\n" +
         "val_dataloader: {num_workers: 0, " + dataset + "}\n" +
         "test_dataloader: {num_workers: 0, " + dataset + "}\n" +
         "train_cfg: {max_epochs: 1}\n"
         "default_hooks: {logger: {interval: 1}}\n";
}

// The "loss" of every line of the run's scalars.json.
std::vector<double> logged_losses(const fs::path& work_dir) {
  std::vector<double> losses;
  for (const auto& entry : fs::recursive_directory_iterator(work_dir)) {
    if (entry.path().filename() != "scalars.json") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      const std::size_t at = line.find("\"loss\": ");
      if (at != std::string::npos) losses.push_back(std::strtod(line.c_str() + at + 8, nullptr));
    }
  }
  return losses;
}

// `ddp3d train` on the config made of `model`, in a fresh folder; returns the work dir.
fs::path train(const std::string& model) {
  std::string tmpl = (fs::temp_directory_path() / "ddp3d-plugin-XXXXXX").string();
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  const fs::path config = dir / "plugin.yaml";
  std::ofstream(config) << config_text(dir / "synth", model);
  const std::string work_dir = (dir / "work").string();
  std::vector<std::string> args = {"train", config.string(), "--work-dir", work_dir};
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_EQ(cli::run_train(static_cast<int>(argv.size()), argv.data()), 0);
  return work_dir;
}

class PluginParts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    components::register_builtin_components();
    register_tiny_backbone();
    register_tiny_neck();
    register_tiny_head();
    register_tiny_encoders();
  }
};

TEST_F(PluginParts, AVoxelAndAMiddleEncoderTrainInsidePointPillarsByConfig) {
  const fs::path work_dir = train(kTinyEncoders);
  const std::vector<double> losses = logged_losses(work_dir);
  ASSERT_GE(losses.size(), 2U);
  for (const double loss : losses) EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
  EXPECT_EQ(TinyVoxelEncoderImpl::builds, 1);
  EXPECT_EQ(TinyScatterImpl::builds, 1);
  EXPECT_GE(TinyVoxelEncoderImpl::forwards, static_cast<int>(losses.size()));
  EXPECT_GE(TinyScatterImpl::forwards, static_cast<int>(losses.size()));
  std::error_code ec;
  fs::remove_all(work_dir.parent_path(), ec);
}

TEST_F(PluginParts, ABackboneTrainsInsidePointPillarsByConfig) {
  const fs::path work_dir = train(kTinyBackbone);

  // One loss logged per iteration (8 train scenes, batch 2), each finite; the backbone was
  // built once, by the registry, and ran on every one of those batches.
  const std::vector<double> losses = logged_losses(work_dir);
  ASSERT_GE(losses.size(), 2U);
  for (const double loss : losses) EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
  EXPECT_EQ(TinyBackboneImpl::builds, 1);
  EXPECT_GE(TinyBackboneImpl::forwards, static_cast<int>(losses.size()));
  std::error_code ec;
  fs::remove_all(work_dir.parent_path(), ec);
}

TEST_F(PluginParts, ANeckTrainsInsidePointPillarsByConfig) {
  const fs::path work_dir = train(kTinyNeck);
  const std::vector<double> losses = logged_losses(work_dir);
  ASSERT_GE(losses.size(), 2U);
  for (const double loss : losses) EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
  EXPECT_EQ(TinyNeckImpl::builds, 1);
  EXPECT_GE(TinyNeckImpl::forwards, static_cast<int>(losses.size()));
  std::error_code ec;
  fs::remove_all(work_dir.parent_path(), ec);
}

TEST_F(PluginParts, AHeadTrainsInsidePointPillarsByConfig) {
  const int builds = TinyHeadImpl::builds;
  const fs::path work_dir = train(kTinyHead);
  // Its loss is the only one logged: Anchor3DHead's loss_cls/loss_bbox/loss_dir are not.
  const std::vector<double> losses = logged_losses(work_dir);
  ASSERT_GE(losses.size(), 2U);
  for (const double loss : losses) EXPECT_TRUE(std::isfinite(loss) && loss > 0) << loss;
  EXPECT_EQ(TinyHeadImpl::builds, builds + 1);
  EXPECT_GE(TinyHeadImpl::losses, static_cast<int>(losses.size()));
  EXPECT_GE(TinyHeadImpl::predictions, 1);  // the validation after the epoch
  bool anchor_terms = false;
  bool own_term = false;
  for (const auto& entry : fs::recursive_directory_iterator(work_dir)) {
    if (entry.path().filename() != "scalars.json") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      anchor_terms = anchor_terms || line.find("loss_cls") != std::string::npos;
      own_term = own_term || line.find("loss_heatmap") != std::string::npos;
    }
  }
  EXPECT_TRUE(own_term);
  EXPECT_FALSE(anchor_terms);
  std::error_code ec;
  fs::remove_all(work_dir.parent_path(), ec);
}

}  // namespace
}  // namespace ddp3d::testing
