// KITTI AP against hand-computed cases: a toy PR curve, perfect / empty detections,
// difficulty filtering, DontCare and neighbour-class ignores, AOS, and shard merging.
#include "worker/eval/kitti_eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <numbers>
#include <stdexcept>

namespace ddp3d::eval {
namespace {

constexpr double kPi = std::numbers::pi;
constexpr int kEasy = 0, kModerate = 1, kHard = 2;
constexpr int kBbox = 0, kBev = 1, k3d = 2, kAos = 3;
constexpr int kStrict = 0;

// The `slot`-th object of a frame: its own place on the ground (5 m apart along x, 20 m
// ahead) and its own image box (60 px wide columns), so objects never overlap each other.
EvalObject object(const std::string& type, int slot, double box_height = 60) {
  EvalObject o;
  o.type = type;
  o.alpha = 0.2;
  o.bbox = {60.0 * slot, 100, 60.0 * slot + 50, 100 + box_height};
  o.dimensions = {1.5, 1.6, 3.9};  // h, w, l
  o.location = {5.0 * slot, 1.7, 20};
  o.rotation_y = 0.1;
  return o;
}

EvalObject detection_of(const EvalObject& gt, double score) {
  EvalObject d = gt;
  d.truncated = 0;
  d.occluded = 0;
  d.score = score;
  return d;
}

// A detection that overlaps nothing: far away on the ground and in its own image column.
EvalObject false_positive(const std::string& type, double score) {
  EvalObject d = object(type, 50);
  d.location = {-40, 1.7, 60};
  d.score = score;
  return d;
}

KittiEvalOptions only(const std::string& cls) {
  KittiEvalOptions o;
  o.classes = {cls};
  return o;
}

// AP of every metric and difficulty must be `value` (strict setting).
void expect_all(const ClassAp& c, double ap11_value, double ap40_value, bool with_aos = false) {
  for (int m = 0; m < (with_aos ? 4 : 3); ++m) {
    for (int d = 0; d < 3; ++d) {
      EXPECT_NEAR(c.ap11[kStrict][m][d], ap11_value, 1e-9) << "metric " << m << " diff " << d;
      EXPECT_NEAR(c.ap40[kStrict][m][d], ap40_value, 1e-9) << "metric " << m << " diff " << d;
    }
  }
}

// `n` frames with one detected car each (score falling with the frame index).
KittiEvalFrames perfect_cars(int n, int first_id = 0) {
  KittiEvalFrames frames;
  for (int i = 0; i < n; ++i) {
    EvalFrame f;
    f.frame_id = first_id + i;
    f.ground_truth.push_back(object("Car", 0));
    f.detections.push_back(detection_of(f.ground_truth[0], 0.9 - 0.001 * i));
    frames.add(f);
  }
  return frames;
}

TEST(KittiEval, HandComputedToyCurve) {
  // 3 frames, 4 cars. Ranked detections: 0.9 TP, 0.8 FP, 0.7 TP, 0.6 FP, 0.5 TP; car D missed.
  KittiEvalFrames frames;
  EvalFrame f0{0, {object("Car", 0), object("Car", 1)}, {}};
  f0.detections = {detection_of(f0.ground_truth[0], 0.9), false_positive("Car", 0.8),
                   detection_of(f0.ground_truth[1], 0.5)};
  EvalFrame f1{1, {object("Car", 0)}, {}};
  f1.detections = {detection_of(f1.ground_truth[0], 0.7)};
  EvalFrame f2{2, {object("Car", 3)}, {false_positive("Car", 0.6)}};
  frames.add(f0);
  frames.add(f1);
  frames.add(f2);
  // Recall steps of 1/4 are coarser than the 41 sample positions, so the devkit keeps every
  // TP score as a threshold: 0.9, 0.7, 0.5 with precision 1/1, 2/3, 3/5, and 0 beyond.
  // AP11 samples positions 0, 4, ..., 40 → 1 / 11; AP40 positions 1..40 → (2/3 + 3/5) / 40.
  const auto result = evaluate_kitti(frames, only("Car"));
  expect_all(result.at("Car"), 100.0 / 11, (2.0 / 3 + 3.0 / 5) / 40 * 100);
}

TEST(KittiEval, HalfRecallWithEnoughObjects) {
  // 80 cars in 8 frames, the 40 in even slots detected, no false positives. With recall steps
  // of 1/80 the devkit keeps thresholds at recall 1/80, 2/80, 4/80, ..., 40/80 — 21 points
  // at precision 1 — so AP40 = 20 / 40 and AP11 = 6 / 11 (recall 0, 0.1, ..., 0.5).
  KittiEvalFrames frames;
  double score = 0.99;
  for (int i = 0; i < 8; ++i) {
    EvalFrame f;
    f.frame_id = i;
    for (int slot = 0; slot < 10; ++slot) {
      f.ground_truth.push_back(object("Car", slot));
      if (slot % 2 == 0) f.detections.push_back(detection_of(f.ground_truth.back(), score));
      score -= 0.01;
    }
    frames.add(f);
  }
  const auto result = evaluate_kitti(frames, only("Car"));
  expect_all(result.at("Car"), 600.0 / 11, 50.0);
}

TEST(KittiEval, PerfectDetectionsScoreHundredOnEveryMetric) {
  // 41 objects per class: enough for all 41 recall positions (fewer cannot reach 100 in the
  // devkit's scheme; see docs/evaluation.md).
  KittiEvalFrames frames;
  for (int i = 0; i < 41; ++i) {
    EvalFrame f;
    f.frame_id = i;
    f.ground_truth = {object("Car", 0), object("Pedestrian", 1), object("Cyclist", 2)};
    for (const auto& gt : f.ground_truth) f.detections.push_back(detection_of(gt, 0.5 + i * 0.01));
    frames.add(f);
  }
  const auto result = evaluate_kitti(frames);
  ASSERT_TRUE(result.has_aos);
  for (const auto& cls : result.classes) {
    SCOPED_TRACE(cls.name);
    expect_all(cls, 100, 100, /*with_aos=*/true);
    for (int m = 0; m < 4; ++m) {
      for (int d = 0; d < 3; ++d) {
        EXPECT_NEAR(cls.ap40[1][m][d], 100, 1e-9);  // loose setting too
      }
    }
  }
  const auto metrics = result.metrics();
  EXPECT_NEAR(metrics.at("KITTI/Car_3D_AP40_moderate_strict"), 100, 1e-9);
  EXPECT_NEAR(metrics.at("KITTI/Car_BEV_AP40_moderate_strict"), 100, 1e-9);
  EXPECT_NEAR(metrics.at("KITTI/Cyclist_2D_AP11_hard_loose"), 100, 1e-9);
  EXPECT_NEAR(metrics.at("KITTI/Pedestrian_AOS_AP40_easy_strict"), 100, 1e-9);
  EXPECT_NEAR(metrics.at("KITTI/Overall_3D_AP40_moderate"), 100, 1e-9);
  // 3 classes × 2 settings × 4 metrics × 3 difficulties × 2 AP kinds + overall 4 × 3 × 2.
  EXPECT_EQ(metrics.size(), 3u * 2 * 4 * 3 * 2 + 4 * 3 * 2);
}

TEST(KittiEval, NoDetectionsScoreZero) {
  KittiEvalFrames frames;
  for (int i = 0; i < 5; ++i) frames.add(EvalFrame{i, {object("Car", 0)}, {}});
  const auto result = evaluate_kitti(frames, only("Car"));
  expect_all(result.at("Car"), 0, 0);
  EXPECT_FALSE(result.has_aos);  // no detection carries an alpha
  // And nothing at all (no frames) is 0 too, not NaN.
  expect_all(evaluate_kitti(KittiEvalFrames{}, only("Car")).at("Car"), 0, 0);
}

TEST(KittiEval, OnlyFalsePositivesScoreZero) {
  KittiEvalFrames frames;
  for (int i = 0; i < 5; ++i) {
    frames.add(EvalFrame{i, {object("Car", 0)}, {false_positive("Car", 0.9)}});
  }
  expect_all(evaluate_kitti(frames, only("Car")).at("Car"), 0, 0);
}

TEST(KittiEval, DifficultyFiltersSmallTruncatedBoxes) {
  // 40 easy cars (60 px tall) all detected, plus 40 cars that only qualify as hard (30 px
  // tall, 40 % truncated), none detected.
  KittiEvalFrames frames;
  for (int i = 0; i < 40; ++i) {
    EvalFrame f;
    f.frame_id = i;
    f.ground_truth.push_back(object("Car", 0));
    EvalObject far = object("Car", 1, /*box_height=*/30);
    far.truncated = 0.4;
    f.ground_truth.push_back(far);
    f.detections.push_back(detection_of(f.ground_truth[0], 0.9 - 0.01 * i));
    frames.add(f);
  }
  const ClassAp car = evaluate_kitti(frames, only("Car")).at("Car");
  for (int m = 0; m < 3; ++m) {
    // Easy and moderate: the far cars are ignored → 40 of 40 found. With exactly 40 objects
    // the 41st recall position has no threshold (devkit), so AP40 = 39/40 and AP11 = 10/11.
    EXPECT_NEAR(car.ap40[kStrict][m][kEasy], 97.5, 1e-9);
    EXPECT_NEAR(car.ap40[kStrict][m][kModerate], 97.5, 1e-9);
    EXPECT_NEAR(car.ap11[kStrict][m][kModerate], 1000.0 / 11, 1e-9);
    // Hard: they count → recall 1/2, exactly the half-recall case.
    EXPECT_NEAR(car.ap40[kStrict][m][kHard], 50, 1e-9);
    EXPECT_NEAR(car.ap11[kStrict][m][kHard], 600.0 / 11, 1e-9);
  }
}

TEST(KittiEval, DetectionsOfIgnoredObjectsAreNotFalsePositives) {
  // Every frame: one easy car, one hard-only car; both detected, the hard-only one with the
  // higher score. In easy the hard-only detection is too small (ignored); in moderate it
  // matches an ignored ground truth. Either way it is no FP, so all difficulties reach 100.
  KittiEvalFrames frames;
  for (int i = 0; i < 41; ++i) {
    EvalFrame f;
    f.frame_id = i;
    f.ground_truth.push_back(object("Car", 0));
    EvalObject far = object("Car", 1, 30);
    far.truncated = 0.4;
    f.ground_truth.push_back(far);
    f.detections = {detection_of(f.ground_truth[0], 0.5), detection_of(far, 0.95)};
    frames.add(f);
  }
  expect_all(evaluate_kitti(frames, only("Car")).at("Car"), 100, 100);
}

// 41 perfectly detected cars at score 0.9 plus, in frame 0, `extra_gt` (when given) and a
// Car detection scoring 0.95 placed by `place`.
KittiEvalFrames cars_with_extra(const EvalObject* extra_gt, const EvalObject& extra_det) {
  KittiEvalFrames frames = perfect_cars(41);
  EvalFrame f0 = frames.frames().at(0);
  if (extra_gt) f0.ground_truth.push_back(*extra_gt);
  f0.detections.push_back(extra_det);
  KittiEvalFrames out;
  out.add(f0);
  for (const auto& [id, f] : frames.frames()) {
    if (id != 0) out.add(f);
  }
  return out;
}

// AP when a false positive outranks all 41 true positives: precision k / (k + 1) at the
// threshold of the k-th TP, rising with k; interpolation (best precision at any higher recall)
// lifts every recall position to 41/42.
double ap_with_one_top_false_positive() {
  return 100.0 * 41 / 42;
}

TEST(KittiEval, DontCareForgivesDetectionsIn2dOnly) {
  // A DontCare region and a high-scoring Car detection inside it (in the image), far from
  // everything on the ground.
  EvalObject dontcare = object("DontCare", 3);
  dontcare.dimensions = {-1, -1, -1};
  dontcare.location = {-1000, -1000, -1000};
  dontcare.rotation_y = -10;
  EvalObject det = false_positive("Car", 0.95);
  det.bbox = {dontcare.bbox[0] + 5, dontcare.bbox[1] + 5, dontcare.bbox[2] - 5,
              dontcare.bbox[3] - 5};
  const ClassAp car = evaluate_kitti(cars_with_extra(&dontcare, det), only("Car")).at("Car");
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(car.ap40[kStrict][kBbox][d], 100, 1e-9);  // forgiven
    EXPECT_NEAR(car.ap40[kStrict][kBev][d], ap_with_one_top_false_positive(), 1e-9);
    EXPECT_NEAR(car.ap40[kStrict][k3d][d], ap_with_one_top_false_positive(), 1e-9);
  }
  EXPECT_NEAR(car.ap11[kStrict][kBev][kModerate], ap_with_one_top_false_positive(), 1e-9);
}

TEST(KittiEval, VanIsIgnoredForCarButOtherClassesAreNot) {
  EvalObject van = object("Van", 4);
  const EvalObject det = detection_of(van, 0.95);  // a "Car" detection on the van
  EvalObject det_car = det;
  det_car.type = "Car";
  expect_all(evaluate_kitti(cars_with_extra(&van, det_car), only("Car")).at("Car"), 100, 100);
  // A Truck is not a neighbour of Car: the same detection is a false positive.
  EvalObject truck = van;
  truck.type = "Truck";
  const ClassAp car = evaluate_kitti(cars_with_extra(&truck, det_car), only("Car")).at("Car");
  EXPECT_NEAR(car.ap40[kStrict][kBev][kModerate], ap_with_one_top_false_positive(), 1e-9);
}

TEST(KittiEval, PersonSittingIsIgnoredForPedestrian) {
  KittiEvalFrames frames;
  for (int i = 0; i < 41; ++i) {
    EvalFrame f;
    f.frame_id = i;
    f.ground_truth = {object("Pedestrian", 0), object("Person_sitting", 1)};
    f.detections = {detection_of(f.ground_truth[0], 0.5), detection_of(f.ground_truth[1], 0.9)};
    f.detections[1].type = "Pedestrian";
    frames.add(f);
  }
  expect_all(evaluate_kitti(frames, only("Pedestrian")).at("Pedestrian"), 100, 100);
}

TEST(KittiEval, AosFollowsTheOrientationError) {
  auto with_alpha_offset = [](double offset) {
    const KittiEvalFrames perfect = perfect_cars(41);
    KittiEvalFrames frames;
    for (const auto& [id, f] : perfect.frames()) {
      EvalFrame g = f;
      g.detections[0].alpha += offset;
      frames.add(g);
    }
    return evaluate_kitti(frames, only("Car")).at("Car");
  };
  const ClassAp exact = with_alpha_offset(0);
  const ClassAp quarter = with_alpha_offset(kPi / 2);
  const ClassAp flipped = with_alpha_offset(kPi);
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(exact.ap40[kStrict][kAos][d], exact.ap40[kStrict][kBbox][d], 1e-9);
    EXPECT_NEAR(exact.ap11[kStrict][kAos][d], 100, 1e-9);
    // (1 + cos(pi/2)) / 2 = 1/2 per TP; a flip by pi scores (1 + cos(pi)) / 2 = 0.
    EXPECT_NEAR(quarter.ap40[kStrict][kAos][d], 50, 1e-9);
    EXPECT_NEAR(flipped.ap40[kStrict][kAos][d], 0, 1e-9);
    EXPECT_NEAR(flipped.ap40[kStrict][kBbox][d], 100, 1e-9);  // boxes are still right
  }
}

KittiEvalFrames mixed_frames() {
  // A mix of TPs, FPs, misses, classes and difficulties, so every metric is non-trivial.
  KittiEvalFrames frames;
  for (int i = 0; i < 30; ++i) {
    EvalFrame f;
    f.frame_id = 100 + i;
    f.ground_truth = {object("Car", 0), object("Pedestrian", 1), object("Cyclist", 2, 30)};
    f.ground_truth[2].occluded = i % 3;
    f.detections.push_back(detection_of(f.ground_truth[0], 0.3 + 0.02 * i));
    f.detections[0].location[0] += 0.05 * (i % 7);  // imperfect boxes
    f.detections[0].alpha += 0.1 * (i % 5);
    if (i % 2) f.detections.push_back(detection_of(f.ground_truth[1], 0.8 - 0.01 * i));
    if (i % 3 == 0) f.detections.push_back(false_positive("Car", 0.5 + 0.01 * i));
    if (i % 4 == 0) f.detections.push_back(detection_of(f.ground_truth[2], 0.6));
    frames.add(f);
  }
  return frames;
}

TEST(KittiEvalFrames, MergedShardsEqualEvaluatingAllFrames) {
  const KittiEvalFrames all = mixed_frames();
  // Round-robin shards as a distributed sampler hands them out, the last one padded with a
  // repeat of the first frame; each shard travels as bytes.
  KittiEvalFrames shard0, shard1;
  int k = 0;
  for (const auto& [id, f] : all.frames()) (k++ % 2 ? shard1 : shard0).add(f);
  shard1.add(all.frames().begin()->second);
  const KittiEvalFrames merged = merge_serialized_shards({shard0.serialize(), shard1.serialize()});

  ASSERT_EQ(merged.size(), all.size());
  const auto expected = evaluate_kitti(all).metrics();
  const auto got = evaluate_kitti(merged).metrics();
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [name, value] : expected) EXPECT_EQ(got.at(name), value) << name;
  // The case is not trivial: moderate Car 3D AP sits strictly between 0 and 100.
  EXPECT_GT(expected.at("KITTI/Car_3D_AP40_moderate_strict"), 0);
  EXPECT_LT(expected.at("KITTI/Car_3D_AP40_moderate_strict"), 100);
}

TEST(KittiEvalFrames, SerialisationRoundTripsExactly) {
  const KittiEvalFrames all = mixed_frames();
  const std::string bytes = all.serialize();
  const KittiEvalFrames back = KittiEvalFrames::deserialize(bytes);
  EXPECT_EQ(back.frames(), all.frames());
  EXPECT_EQ(back.serialize(), bytes);
}

TEST(KittiEvalFrames, RejectsBadInput) {
  const std::string bytes = mixed_frames().serialize();
  EXPECT_THROW(KittiEvalFrames::deserialize(bytes.substr(0, bytes.size() - 3)),
               std::invalid_argument);
  EXPECT_THROW(KittiEvalFrames::deserialize("NOTMAGIC"), std::invalid_argument);
  EXPECT_THROW(KittiEvalFrames::deserialize(bytes + "x"), std::invalid_argument);
  try {
    merge_serialized_shards({bytes, bytes.substr(0, 20)});
    FAIL() << "a truncated shard was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("shard 1: ", 0), 0u) << e.what();
  }

  KittiEvalFrames frames;
  frames.add(EvalFrame{7, {object("Car", 0)}, {}});
  try {
    frames.add(EvalFrame{7, {object("Car", 1)}, {}});
    FAIL() << "a conflicting duplicate frame was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("frame 7"), std::string::npos) << e.what();
  }
  EvalFrame bad{8, {object("Car", 0)}, {}};
  bad.ground_truth[0].location[2] = std::nan("");
  try {
    frames.add(bad);
    FAIL() << "a NaN location was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("frame 8 ground_truth[0].location"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(evaluate_kitti(frames, only("Truck")), std::invalid_argument);
  KittiEvalOptions twice;
  twice.classes = {"Car", "Cyclist", "Car"};
  EXPECT_THROW(evaluate_kitti(frames, twice), std::invalid_argument);
}

TEST(KittiEvalReport, TableLooksLikeMmdet3d) {
  const auto result = evaluate_kitti(perfect_cars(41), only("Car"));
  const std::string table = result.table();
  for (const char* line :
       {"----------- AP11 Results ------------", "Car AP11@0.70, 0.70, 0.70:",
        "Car AP11@0.70, 0.50, 0.50:", "bbox AP11:100.0000, 100.0000, 100.0000",
        "bev  AP40:100.0000, 100.0000, 100.0000", "3d   AP40:100.0000, 100.0000, 100.0000",
        "aos  AP40:100.00, 100.00, 100.00", "----------- AP40 Results ------------"}) {
    EXPECT_NE(table.find(line), std::string::npos) << line << "\nin:\n" << table;
  }
  EXPECT_EQ(table.find("Overall"), std::string::npos);  // one class: no overall rows
  const std::string json = result.metrics_json();
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_NE(json.find("\"KITTI/Car_BEV_AP40_moderate_strict\": 100"), std::string::npos) << json;
  std::cout << table;
}

}  // namespace
}  // namespace ddp3d::eval
