// The pipeline built from a config's transform list: which steps run, their effect, and the
// errors for transforms this build does not have.
#include "worker/detection/detection_pipeline.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tests/support/subprocess.h"

namespace ddp3d::detection {
namespace {

// The toy config with its training dataset replaced by a KITTI one with `pipeline_yaml`.
config::Config dataset_cfg(const std::string& pipeline_yaml) {
  const std::string yaml =
      "_base_: " + testing::source_path("configs/toy/toy_regression_2proc.yaml") +
      R"(
train_dataloader:
  batch_size: 1
  dataset:
    _delete_: true
    type: KittiDataset
    data_root: /nonexistent
    split: train
    metainfo: {classes: [Car]}
    pipeline:
)" + pipeline_yaml;
  return config::parse(yaml, "pipeline.yaml").node("train_dataloader.dataset");
}

data::DetectionSample sample() {
  data::DetectionSample s;
  s.points = at::tensor({1.0f, 0.0f, -1.0f, 0.5f,    //
                         10.0f, 5.0f, -1.0f, 0.1f,   //
                         60.0f, 0.0f, -1.0f, 0.2f},  // outside the range below
                        at::kFloat)
                 .view({3, 4});
  s.gt_boxes = at::tensor({10.0f, 5.0f, -1.7f, 4.0f, 1.6f, 1.5f, 0.3f,  //
                           55.0f, 0.0f, -1.7f, 4.0f, 1.6f, 1.5f, 0.0f},
                          at::kFloat)
                   .view({2, 7});
  s.gt_labels = at::tensor({0, 0}, at::kLong);
  return s;
}

TEST(DetectionPipeline, BuildsTheConfiguredStepsInOrder) {
  const DetectionPipeline p = DetectionPipeline::from_config(dataset_cfg(R"(
      - {type: LoadPointsFromFile, coord_type: LIDAR, load_dim: 4, use_dim: 3}
      - {type: LoadAnnotations3D, with_bbox_3d: true, with_label_3d: true}
      - {type: PointsRangeFilter, point_cloud_range: [0, -20, -3, 40, 20, 1]}
      - {type: ObjectRangeFilter, point_cloud_range: [0, -20, -3, 40, 20, 1]}
      - {type: Pack3DDetInputs, keys: [points, gt_bboxes_3d, gt_labels_3d]}
)"));
  EXPECT_EQ(p.use_dim(), 3);
  EXPECT_TRUE(p.with_annotations());
  EXPECT_EQ(p.step_names(), (std::vector<std::string>{"LoadPointsFromFile", "LoadAnnotations3D",
                                                      "PointsRangeFilter", "ObjectRangeFilter",
                                                      "Pack3DDetInputs"}));
  data::DetectionSample s = sample();
  std::mt19937_64 rng(0);
  p.apply(s, rng);
  EXPECT_EQ(s.points.size(0), 2);  // the point at x = 60 is gone
  ASSERT_EQ(s.gt_boxes.size(0), 1);
  EXPECT_FLOAT_EQ(s.gt_boxes[0][0].item<float>(), 10.0f);
}

TEST(DetectionPipeline, RandomStepsDrawFromTheGivenGenerator) {
  const DetectionPipeline p = DetectionPipeline::from_config(dataset_cfg(R"(
      - {type: LoadAnnotations3D}
      - {type: RandomFlip3D, flip_ratio_bev_horizontal: 0.5}
      - {type: GlobalRotScaleTrans, rot_range: [-0.78, 0.78], scale_ratio_range: [0.95, 1.05]}
      - {type: PointShuffle}
)"));
  auto run = [&](std::uint64_t seed) {
    data::DetectionSample s = sample();
    std::mt19937_64 rng(seed);
    p.apply(s, rng);
    return s;
  };
  const auto a = run(1), b = run(1), c = run(2);
  EXPECT_TRUE(at::equal(a.points, b.points));
  EXPECT_TRUE(at::equal(a.gt_boxes, b.gt_boxes));
  EXPECT_FALSE(at::equal(a.gt_boxes, c.gt_boxes));
  // Rotation and scaling keep a box's distance from the origin within the scale range.
  const double r0 = std::hypot(10.0, 5.0);
  const double r = std::hypot(a.gt_boxes[0][0].item<double>(), a.gt_boxes[0][1].item<double>());
  EXPECT_GE(r, 0.95 * r0 - 1e-4);
  EXPECT_LE(r, 1.05 * r0 + 1e-4);
}

TEST(DetectionPipeline, VerticalFlipMirrorsXAndYaw) {
  const DetectionPipeline p = DetectionPipeline::from_config(dataset_cfg(R"(
      - {type: RandomFlip3D, flip_ratio_bev_vertical: 1.0}
)"));
  data::DetectionSample s = sample();
  std::mt19937_64 rng(0);
  p.apply(s, rng);
  EXPECT_FLOAT_EQ(s.points[1][0].item<float>(), -10.0f);
  EXPECT_FLOAT_EQ(s.gt_boxes[0][0].item<float>(), -10.0f);
  EXPECT_NEAR(s.gt_boxes[0][6].item<double>(), M_PI - 0.3, 1e-6);
}

TEST(DetectionPipeline, UnsupportedOptionsNameTheirKey) {
  try {
    DetectionPipeline::from_config(dataset_cfg(R"(
      - {type: LoadPointsFromFile, coord_type: LIDAR, load_dim: 4, use_dim: 4}
      - {type: ObjectNoise, global_rot_range: [-0.1, 0.1]}
)"));
    FAIL() << "ObjectNoise with a global rotation accepted";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("train_dataloader.dataset.pipeline.1.global_rot_range"), std::string::npos)
        << what;
    EXPECT_NE(what.find("pipeline.yaml"), std::string::npos) << what;
  }
  EXPECT_THROW(DetectionPipeline::from_config(dataset_cfg(R"(
      - {type: LoadPointsFromFile, coord_type: LIDAR, load_dim: 4, use_dim: 5}
)")),
               config::ConfigError);
}

}  // namespace
}  // namespace ddp3d::detection
