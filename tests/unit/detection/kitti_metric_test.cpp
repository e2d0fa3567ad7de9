// The KITTI metric's conversions (records <-> tensors, LiDAR predictions -> KITTI results) and
// its AP on frames whose answer is known.
#include "worker/detection/kitti_metric.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "tests/unit/config/temp_dir.h"
#include "worker/data/kitti_label.h"
#include "worker/data/lidar_box.h"
#include "worker/detection/kitti_eval_record.h"
#include "worker/eval/kitti_eval.h"

namespace ddp3d::detection {
namespace {

const std::string kBev = "KITTI/Car_BEV_AP40_moderate_strict";

std::vector<data::LidarBox> cars() {
  return {{12.0, 2.0, -1.7, 4.0, 1.7, 1.5, 0.2}, {20.0, -4.0, -1.7, 4.2, 1.8, 1.6, -1.4}};
}

at::Tensor as_tensor(const std::vector<data::LidarBox>& boxes, double dx = 0) {
  std::vector<float> v;
  for (const auto& b : boxes)
    for (double x : {b.x + dx, b.y, b.z, b.l, b.w, b.h, b.yaw}) v.push_back(static_cast<float>(x));
  return at::tensor(v, at::kFloat).view({static_cast<std::int64_t>(boxes.size()), 7});
}

TEST(KittiEvalRecord, ObjectsAndCalibRoundTrip) {
  const data::KittiCalib calib = data::typical_kitti_calib();
  std::vector<data::KittiObject> objects;
  for (const auto& b : cars())
    objects.push_back(data::kitti_object_from_lidar_box(b, calib, "Car"));
  objects.push_back(objects[0]);
  objects.back().type = "DontCare";
  objects.back().occluded = 2;
  const auto back = unpack_objects(pack_objects(objects), types_to_meta(objects));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[2].type, "DontCare");
  EXPECT_EQ(back[2].occluded, 2);
  EXPECT_EQ(back[1].location, objects[1].location);
  EXPECT_EQ(back[1].bbox, objects[1].bbox);
  EXPECT_EQ(back[0].rotation_y, objects[0].rotation_y);
  const data::KittiCalib c2 = unpack_calib(pack_calib(calib));
  EXPECT_EQ(c2.P2, calib.P2);
  EXPECT_EQ(c2.R0_rect, calib.R0_rect);
  EXPECT_EQ(c2.Tr_velo_to_cam, calib.Tr_velo_to_cam);
  EXPECT_THROW(unpack_objects(pack_objects(objects), "Car,Car"), std::invalid_argument);
}

TEST(KittiMetric, PredictionsOutsideTheRangeOrTheImageAreDropped) {
  const data::KittiCalib calib = data::typical_kitti_calib();
  const std::vector<data::LidarBox> boxes = {
      {12.0, 2.0, -1.7, 4.0, 1.7, 1.5, 0.2},   // in front: kept
      {-6.0, 0.0, -1.7, 4.0, 1.7, 1.5, 0.0},   // behind the sensor: outside the range
      {30.0, 38.0, -1.7, 4.0, 1.7, 1.5, 0.0},  // in range, far outside the camera's view
  };
  const auto out =
      detections_to_kitti(as_tensor(boxes), at::tensor({0.9, 0.8, 0.7}), at::zeros({3}, at::kLong),
                          calib, {"Car"}, {0, -40, -3, 70.4, 40, 0});
  ASSERT_EQ(out.size(), 1u);
  const data::KittiObject want = data::kitti_object_from_lidar_box(boxes[0], calib, "Car");
  EXPECT_EQ(out[0].type, "Car");
  for (int d = 0; d < 3; ++d) {  // the predicted box went through float32
    EXPECT_NEAR(out[0].location[d], want.location[d], 1e-5);
    EXPECT_NEAR(out[0].dimensions[d], want.dimensions[d], 1e-5);
  }
  EXPECT_DOUBLE_EQ(out[0].score, 0.9);
  EXPECT_GT(out[0].bbox[3] - out[0].bbox[1], 25.0);  // tall enough for "moderate"
  EXPECT_THROW(
      detections_to_kitti(as_tensor(boxes), at::tensor({0.9, 0.8, 0.7}),
                          at::full({3}, 1, at::kLong), calib, {"Car"}, {0, -40, -3, 70.4, 40, 0}),
      std::invalid_argument);
}

// 40 frames with the cars above as ground truth; predictions shifted by `dx` metres. (The
// devkit samples precision at score thresholds taken from the true positives, so with fewer
// than about 40 objects even perfect predictions score far below 100.)
// Frame i's predictions are shifted by shift(i) metres; frame 7 has none.
engine::MetricMap score_frames(const KittiMetricOptions& options,
                               const std::function<double(int)>& shift) {
  constexpr int kFrames = 40;
  const data::KittiCalib calib = data::typical_kitti_calib();
  std::vector<data::KittiObject> gt;
  for (const auto& b : cars()) gt.push_back(data::kitti_object_from_lidar_box(b, calib, "Car"));
  KittiMetric metric(options);
  engine::Batch batch;
  batch.size = kFrames;
  std::vector<engine::Sample> predictions(kFrames);
  for (int i = 0; i < kFrames; ++i) {
    batch.lists["eval_gt"].push_back(pack_objects(gt));
    batch.lists["calib"].push_back(pack_calib(calib));
    char id[16];
    std::snprintf(id, sizeof id, "%06d", 100 + i);
    batch.meta.push_back({{"sample_idx", std::to_string(i)},
                          {"frame_id", id},
                          {"gt_types", types_to_meta(gt)},
                          {"classes", "Car"}});
    const bool none = std::isnan(shift(i));  // no predictions in this frame
    predictions[i].tensors["bboxes_3d"] = none ? at::zeros({0, 7}) : as_tensor(cars(), shift(i));
    predictions[i].tensors["scores_3d"] = none ? at::zeros({0}) : at::tensor({0.9f, 0.8f});
    predictions[i].tensors["labels_3d"] = at::zeros({none ? 0 : 2}, at::kLong);
  }
  metric.process(batch, predictions);
  EXPECT_EQ(metric.results().size(), static_cast<std::size_t>(kFrames));
  return metric.compute_metrics(metric.results());
}

// 40 frames with the cars above as ground truth; predictions shifted by `dx` metres. (The
// devkit samples precision at score thresholds taken from the true positives, so with fewer
// than about 40 objects even perfect predictions score far below 100.)
engine::MetricMap score(double dx) {
  return score_frames(KittiMetricOptions{}, [dx](int) { return dx; });
}

TEST(KittiMetric, PerfectPredictionsScoreFullAp) {
  const engine::MetricMap m = score(0.0);
  EXPECT_GE(m.at(kBev), 97.5);
  EXPECT_GE(m.at("KITTI/Car_3D_AP40_moderate_strict"), 97.5);
  EXPECT_GE(m.at("KITTI/Car_2D_AP40_moderate_strict"), 97.5);
  EXPECT_EQ(m.at("KITTI/num_detections"), 80.0);
  EXPECT_NEAR(m.at("KITTI/mean_score"), 0.85, 1e-6);  // scores 0.9 and 0.8 per frame
}

TEST(KittiMetric, BoxesOneMetreOffMissAtIou07) {
  const engine::MetricMap m = score(1.0);
  EXPECT_NEAR(m.at(kBev), 0.0, 1e-9);
  EXPECT_GT(m.at("KITTI/Car_BEV_AP40_moderate_loose"), 0.0);  // the car along x still overlaps 0.6
}

// Shifts of 0 to 0.9 m: some boxes match at IoU 0.7, some only at 0.5, some not at all.
double mixed_shift(int i) {
  return i == 7 ? std::nan("") : 0.15 * (i % 7);
}

TEST(KittiMetric, SubmissionFilesReadBackScoreTheSameAp) {
  const config::testing::TempDir tmp;
  KittiMetricOptions options;
  options.submission_prefix = tmp.path("results");
  const engine::MetricMap in_memory = score_frames(options, mixed_shift);
  EXPECT_GT(in_memory.at(kBev), 1.0);
  EXPECT_LT(in_memory.at(kBev), 99.0);  // a partial score: the comparison below means something

  // The files through the label parser, against the same ground truth, as the KITTI server
  // would read them.
  const data::KittiCalib calib = data::typical_kitti_calib();
  std::vector<data::KittiObject> gt;
  for (const auto& b : cars()) gt.push_back(data::kitti_object_from_lidar_box(b, calib, "Car"));
  eval::KittiEvalFrames frames;
  for (int i = 0; i < 40; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "%06d", 100 + i);
    eval::EvalFrame f;
    f.frame_id = i;
    f.ground_truth = unpack_objects(pack_objects(gt), types_to_meta(gt));
    const auto path = std::filesystem::path(tmp.path("results")) / (std::string(id) + ".txt");
    ASSERT_TRUE(std::filesystem::is_regular_file(path)) << path;
    for (const data::KittiObject& o : data::read_kitti_labels(path.string())) {
      EXPECT_TRUE(o.has_score);
      EXPECT_EQ(o.truncated, -1);
      EXPECT_EQ(o.occluded, -1);
      f.detections.push_back(to_eval_object(o));
    }
    if (i == 7) {
      EXPECT_TRUE(f.detections.empty()) << "a frame without detections: an empty file";
    }
    frames.add(std::move(f));
  }
  eval::KittiEvalOptions eval_options;
  eval_options.classes = {"Car"};
  const engine::MetricMap from_files = eval::evaluate_kitti(frames, eval_options).metrics();
  for (const auto& [name, value] : from_files) {
    ASSERT_TRUE(in_memory.count(name)) << name;
    // AOS weighs matches by cos(alpha error): alpha's four decimals move it by about 1e-6.
    const bool aos = name.find("_AOS_") != std::string::npos;
    EXPECT_NEAR(in_memory.at(name), value, aos ? 1e-5 : 1e-9) << name;
  }
}

TEST(KittiMetric, FormatOnlyWritesTheFilesAndScoresNothing) {
  const config::testing::TempDir tmp;
  KittiMetricOptions options;
  options.submission_prefix = tmp.path("deep/results");
  options.format_only = true;
  const engine::MetricMap m = score_frames(options, mixed_shift);
  EXPECT_FALSE(m.count(kBev));
  EXPECT_EQ(m.at("KITTI/num_detections"), 78.0);  // 39 frames x 2 cars
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path("deep/results"))) {
    files += e.path().extension() == ".txt";
  }
  EXPECT_EQ(files, 40u);
}

}  // namespace
}  // namespace ddp3d::detection
