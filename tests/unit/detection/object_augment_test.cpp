// The GT database and the object-level augmentations: what is written, what is pasted, and
// that no two boxes ever overlap afterwards.
#include "worker/detection/object_augment.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/subprocess.h"
#include "worker/data/point_cloud_file.h"
#include "worker/detection/detection_pipeline.h"
#include "worker/detection/kitti_detection_dataset.h"
#include "worker/ops/box_iou.h"

namespace ddp3d::detection {
namespace {
namespace fs = std::filesystem;

// A 6-scene synthetic dataset and its Car/Pedestrian database, made once for the suite.
class ObjectAugment : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (fs::temp_directory_path() / ("ddp3d-gtdb-" + std::to_string(::getpid()))).string();
    data::SynthKittiOptions o;
    o.scenes = 6;
    o.val_fraction = 0.0;
    ensure_synthetic_kitti(root_, o);
    db_ = data::create_gt_database(root_, "train", {"Car", "Pedestrian"});
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static ObjectSampleOptions options(int cars) {
    ObjectSampleOptions o;
    o.data_root = root_;
    o.info_path = root_ + "/kitti_dbinfos_train.tsv";
    o.sample_groups = {{"Car", cars}};
    return o;
  }

  static std::string root_;
  static std::vector<data::GtDatabaseEntry> db_;
};
std::string ObjectAugment::root_;
std::vector<data::GtDatabaseEntry> ObjectAugment::db_;

// Off-diagonal BEV intersections of boxes [K, 7].
float max_overlap(const at::Tensor& boxes) {
  const at::Tensor bev = at::stack({boxes.select(1, 0), boxes.select(1, 1), boxes.select(1, 3),
                                    boxes.select(1, 4), boxes.select(1, 6)},
                                   1);
  const at::Tensor inter = ops::box_intersection_rotated_bev(bev, bev);
  return (inter - at::diag(at::diag(inter))).max().item<float>();
}

TEST_F(ObjectAugment, DatabaseHoldsEachLabelledObjectsPointsAroundItsBox) {
  ASSERT_GT(db_.size(), 20u);
  EXPECT_EQ(data::read_gt_database(root_ + "/kitti_dbinfos_train.tsv").size(), db_.size());
  int with_points = 0;
  for (const auto& e : db_) {
    ASSERT_TRUE(e.type == "Car" || e.type == "Pedestrian") << e.type;
    const at::Tensor p = data::read_velodyne(root_ + "/" + e.path);
    ASSERT_EQ(p.size(0), e.num_points) << e.path;
    if (p.size(0) == 0) continue;
    ++with_points;
    // Stored relative to the bottom centre: inside the box's extent around the origin.
    const float reach = static_cast<float>(std::hypot(e.box.l, e.box.w) / 2 + 1e-3);
    EXPECT_LE(at::hypot(p.select(1, 0), p.select(1, 1)).max().item<float>(), reach) << e.path;
    EXPECT_GE(p.select(1, 2).min().item<float>(), -1e-4f) << e.path;
  }
  EXPECT_GT(with_points, 10);
}

TEST_F(ObjectAugment, SamplerPastesCarsWithoutOverlapAndTheirPoints) {
  const ObjectSampler sampler(options(12), {"Car"}, 4);
  EXPECT_GT(sampler.pool_size(0), 5u);
  data::DetectionSample s;
  s.points = at::rand({2000, 4}) * 40;
  s.gt_boxes = at::tensor({20.0f, 0.0f, -1.7f, 4.0f, 1.7f, 1.5f, 0.0f}).view({1, 7});
  s.gt_labels = at::zeros({1}, at::kLong);
  std::mt19937_64 rng(4);
  sampler.apply(s, rng);
  const std::int64_t k = s.gt_boxes.size(0);
  EXPECT_GT(k, 1);
  EXPECT_LE(k, 12);
  EXPECT_EQ(s.gt_labels.size(0), k);
  EXPECT_LE(max_overlap(s.gt_boxes), 0.0f);
  // Every pasted box holds exactly its database points: the scene's were removed.
  for (std::int64_t i = 1; i < k; ++i) {
    const auto b = s.gt_boxes[i];
    const data::LidarBox box{b[0].item<double>(), b[1].item<double>(), b[2].item<double>(),
                             b[3].item<double>(), b[4].item<double>(), b[5].item<double>(),
                             b[6].item<double>()};
    const auto match = std::find_if(db_.begin(), db_.end(), [&](const data::GtDatabaseEntry& e) {
      return std::abs(e.box.x - box.x) < 1e-4 && std::abs(e.box.y - box.y) < 1e-4;
    });
    ASSERT_NE(match, db_.end());
    EXPECT_NEAR(data::points_in_box(s.points, box).sum().item<double>(), match->num_points,
                match->num_points * 0.02 + 1)
        << "box " << i;
  }
}

TEST_F(ObjectAugment, NoiseMovesBoxesWithTheirPointsAndNeverIntoEachOther) {
  data::KittiDataset frames(root_, "train", {"Car"});
  const data::KittiFrame f = frames.load(0);
  data::DetectionSample s{f.points, f.gt_boxes, f.gt_labels};
  ASSERT_GT(s.gt_boxes.size(0), 1);
  std::vector<std::int64_t> before;
  for (std::int64_t i = 0; i < s.gt_boxes.size(0); ++i) {
    const auto b = s.gt_boxes[i];
    before.push_back(data::points_in_box(
                         s.points, {b[0].item<double>(), b[1].item<double>(), b[2].item<double>(),
                                    b[3].item<double>(), b[4].item<double>(), b[5].item<double>(),
                                    b[6].item<double>()})
                         .sum()
                         .item<std::int64_t>());
  }
  ObjectNoiseOptions o;
  o.translation_std = {1.0, 1.0, 0.5};
  o.rot_range = {-0.78, 0.78};
  std::mt19937_64 rng(1);
  data::DetectionSample moved = s;
  object_noise(moved, o, rng);
  EXPECT_FALSE(at::equal(moved.gt_boxes, s.gt_boxes));
  EXPECT_EQ(moved.points.size(0), s.points.size(0));
  EXPECT_LE(max_overlap(moved.gt_boxes), 0.0f);
  for (std::int64_t i = 0; i < moved.gt_boxes.size(0); ++i) {
    const auto b = moved.gt_boxes[i];
    const auto now = data::points_in_box(moved.points, {b[0].item<double>(), b[1].item<double>(),
                                                        b[2].item<double>(), b[3].item<double>(),
                                                        b[4].item<double>(), b[5].item<double>(),
                                                        b[6].item<double>()})
                         .sum()
                         .item<std::int64_t>();
    // The box's own points came along (others may now fall inside its new place too).
    EXPECT_GE(now + 2, before[static_cast<std::size_t>(i)]) << "box " << i;
  }
}

TEST_F(ObjectAugment, PipelineNamesAMissingDatabase) {
  const std::string yaml =
      "_base_: " + testing::source_path("configs/toy/toy_regression_2proc.yaml") + R"(
train_dataloader:
  batch_size: 1
  dataset:
    _delete_: true
    type: KittiDataset
    data_root: /nonexistent
    split: train
    metainfo: {classes: [Car]}
    pipeline:
      - {type: LoadAnnotations3D}
      - type: ObjectSample
        db_sampler:
          data_root: /nonexistent
          info_path: /nonexistent/kitti_dbinfos_train.tsv
          classes: [Car]
          sample_groups: {Car: 15}
)";
  const config::Config cfg = config::parse(yaml, "gt.yaml").node("train_dataloader.dataset");
  try {
    DetectionPipeline::from_config(cfg);
    FAIL() << "a missing database was accepted";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pipeline.1.db_sampler.info_path"), std::string::npos) << what;
    EXPECT_NE(what.find("create-gt-db"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ddp3d::detection
