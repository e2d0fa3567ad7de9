// KITTI-layout datasets through the engine's registries: the synthetic dataset written on
// demand, the sample fields the detector and the metric read, and the full-size mmdet3d car
// config training one iteration on synthetic data.
#include "worker/detection/kitti_detection_dataset.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "tests/support/subprocess.h"
#include "worker/data/gt_database.h"
#include "worker/detection/detection_components.h"

namespace ddp3d::detection {
namespace {
namespace fs = std::filesystem;

struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("ddp3d-detection-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::remove_all(path); }
  ~TempDir() { fs::remove_all(path); }
};

struct Registries {
  engine::Registry<engine::Model> models{"model"};
  engine::Registry<engine::Dataset> datasets{"dataset"};
  engine::Registry<engine::Evaluator> evaluators{"evaluator"};
  Registries() { register_detection_components(models, datasets, evaluators); }
};

at::Generator generator(std::uint64_t seed) {
  return at::make_generator<at::CPUGeneratorImpl>(seed);
}

TEST(SyntheticKitti, IsWrittenOnceAndMismatchedOptionsAreAnError) {
  TempDir tmp;
  const std::string root = (tmp.path / "synth").string();
  data::SynthKittiOptions o;
  o.scenes = 5;
  ensure_synthetic_kitti(root, o);
  ASSERT_TRUE(fs::exists(tmp.path / "synth/ImageSets/train.txt"));
  const auto written = fs::last_write_time(tmp.path / "synth/ImageSets/train.txt");
  ensure_synthetic_kitti(root, o);  // already there: left alone
  EXPECT_EQ(fs::last_write_time(tmp.path / "synth/ImageSets/train.txt"), written);
  for (const auto& entry : fs::directory_iterator(tmp.path)) {
    EXPECT_EQ(entry.path().filename(), "synth") << "a temporary folder was left behind";
  }
  o.seed = 3;
  try {
    ensure_synthetic_kitti(root, o);
    FAIL() << "a dataset made with seed 0 was accepted for seed 3";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(root), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("seed=3"), std::string::npos) << e.what();
  }
}

TEST(SyntheticKitti, DemoConfigSamplesCarryWhatTheDetectorAndTheMetricRead) {
  TempDir tmp;
  const std::string root = (tmp.path / "synth").string();
  const config::Config cfg = config::load(
      testing::source_path("configs/pointpillars/pointpillars_demo_synthetic_car.yaml"),
      {"train_dataloader.dataset.data_root=" + root, "train_dataloader.dataset.num_scenes=10",
       "val_dataloader.dataset.data_root=" + root, "val_dataloader.dataset.num_scenes=10"});
  Registries r;
  const auto train = r.datasets.build(cfg.node("train_dataloader.dataset"));
  const auto val = r.datasets.build(cfg.node("val_dataloader.dataset"));
  EXPECT_EQ(train->size(), 8);
  EXPECT_EQ(val->size(), 2);

  at::Generator g1 = generator(7), g2 = generator(7);
  const engine::Sample a = train->get(3, g1), b = train->get(3, g2);
  EXPECT_TRUE(at::equal(a.tensor("points"), b.tensor("points")));  // same seed, same sample
  const at::Tensor& points = a.tensor("points");
  EXPECT_EQ(points.size(1), 4);
  // The range filter ran: every point is inside the demo's range.
  EXPECT_GE(points.select(1, 0).min().item<float>(), 0.0f);
  EXPECT_LE(points.select(1, 0).max().item<float>(), 40.96f);
  EXPECT_LE(points.select(1, 1).abs().max().item<float>(), 20.48f);
  EXPECT_EQ(a.tensor("gt_bboxes_3d").size(1), 7);
  EXPECT_EQ(a.tensor("gt_labels_3d").size(0), a.tensor("gt_bboxes_3d").size(0));
  EXPECT_EQ(a.meta.at("sample_idx"), "3");
  EXPECT_EQ(a.meta.at("classes"), "Car");

  at::Generator g3 = generator(1);
  const engine::Sample v = val->get(0, g3);
  EXPECT_FALSE(v.has("gt_bboxes_3d"));  // test mode: no training targets
  EXPECT_EQ(v.tensor("eval_gt").size(1), 15);
  EXPECT_EQ(v.tensor("calib").numel(), 36);
  const auto types = v.meta.at("gt_types");
  EXPECT_EQ(static_cast<std::int64_t>(std::count(types.begin(), types.end(), ',')) + 1,
            v.tensor("eval_gt").size(0));

  const engine::Batch batch = train->collate({a, b});
  EXPECT_EQ(batch.list("points").size(), 2u);
  EXPECT_EQ(batch.meta.size(), 2u);
}

TEST(KittiDataset, MissingDataNamesTheKeyAndFile) {
  Registries r;
  const config::Config cfg =
      config::load(testing::source_path(
                       "configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml"),
                   {"train_dataloader.dataset.dataset.data_root=/nonexistent/kitti",
                    "train_dataloader.dataset.dataset.pipeline.2.db_sampler.info_path=/nonexistent/"
                    "kitti/db.tsv"});
  try {
    r.datasets.build(cfg.node("train_dataloader.dataset"));
    FAIL() << "a missing dataset was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("train_dataloader.dataset.dataset"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/kitti"), std::string::npos) << what;
  }
  // With no GT sampling in the pipeline, the missing split list is what is reported.
  const config::Config val =
      config::load(testing::source_path(
                       "configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml"),
                   {"val_dataloader.dataset.data_root=/nonexistent/kitti"});
  try {
    r.datasets.build(val.node("val_dataloader.dataset"));
    FAIL() << "a missing dataset was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("val_dataloader.dataset"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/kitti/ImageSets/val.txt"), std::string::npos) << what;
  }
}

// Issue #4: the full-size car config builds mmdet3d's model and trains one iteration on
// synthetic data, through the same registries `ddp3d train` uses, GT sampling included.
TEST(FullSizeCarConfig, TrainsOneIterationOnSyntheticData) {
  TempDir tmp;
  data::SynthKittiOptions o;
  o.scenes = 4;
  o.val_fraction = 0.25;
  const std::string root = (tmp.path / "kitti").string();
  ensure_synthetic_kitti(root, o);
  const auto db = data::create_gt_database(root, "train", {"Car"});
  ASSERT_GT(db.size(), 5u);
  const std::string sampler = "train_dataloader.dataset.dataset.pipeline.2.db_sampler.";
  const config::Config cfg = config::load(
      testing::source_path(
          "configs/pointpillars/pointpillars_hv_secfpn_8xb6-160e_kitti-3d-car.yaml"),
      {"train_dataloader.dataset.dataset.data_root=" + root, sampler + "data_root=" + root,
       sampler + "info_path=" + root + "/kitti_dbinfos_train.tsv"});
  Registries r;
  at::manual_seed(0);
  const auto model = r.models.build(cfg.node("model"));
  std::int64_t params = 0;
  for (const at::Tensor& p : model->parameters()) params += p.numel();
  EXPECT_EQ(params, 4814868);

  const auto data = r.datasets.build(cfg.node("train_dataloader.dataset"));
  EXPECT_EQ(data->size(), 2 * 3);  // RepeatDataset times 2 over the 3 training scenes
  at::Generator g = generator(0);
  const engine::Batch batch = data->collate({data->get(0, g), data->get(1, g)});
  ASSERT_GT(batch.list("gt_bboxes_3d")[0].size(0) + batch.list("gt_bboxes_3d")[1].size(0), 0);
  model->train();
  const engine::LossMap losses = model->forward_train(batch);
  const at::Tensor loss = engine::total_loss(losses);
  ASSERT_TRUE(std::isfinite(loss.item<double>()));
  loss.backward();
  double grad_norm = 0;
  for (const at::Tensor& p : model->parameters())
    if (p.grad().defined()) grad_norm += p.grad().pow(2).sum().item<double>();
  EXPECT_GT(grad_norm, 0.0);
}

}  // namespace
}  // namespace ddp3d::detection
