#include "worker/data/synthetic_kitti.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/subprocess.h"
#include "worker/data/kitti_dataset.h"

namespace ddp3d::data {
namespace {

// Points inside a lidar box (with a margin for the range noise).
std::int64_t points_in_box(const at::Tensor& points, const at::Tensor& box, double margin) {
  const auto b = box.accessor<float, 1>();
  const double c = std::cos(b[6]), s = std::sin(b[6]);
  const auto dx = points.select(1, 0) - b[0], dy = points.select(1, 1) - b[1];
  const auto lx = dx * c + dy * s, ly = -dx * s + dy * c;
  const auto z = points.select(1, 2);
  const auto inside = (lx.abs() <= b[3] / 2 + margin) & (ly.abs() <= b[4] / 2 + margin) &
                      (z >= b[2] + 0.05) & (z <= b[2] + b[5] + margin);
  return inside.sum().item<std::int64_t>();
}

TEST(SyntheticScene, IsDeterministicAndLooksLikeALidarScan) {
  SceneOptions o;
  const auto a = generate_scene(o, 42), b = generate_scene(o, 42), c = generate_scene(o, 43);
  EXPECT_EQ(a.points, b.points);
  EXPECT_NE(a.points, c.points);
  EXPECT_GT(a.num_points(), 15000);
  ASSERT_FALSE(a.objects.empty());
  // Density falls with distance: the nearest car has more points than the farthest.
  const SceneObject* near = nullptr;
  const SceneObject* far = nullptr;
  for (const auto& obj : a.objects) {
    if (obj.type != "Car") continue;
    if (!near || obj.box.x < near->box.x) near = &obj;
    if (!far || obj.box.x > far->box.x) far = &obj;
  }
  ASSERT_NE(near, nullptr);
  if (far->box.x > near->box.x + 15) {
    EXPECT_GT(near->num_points, far->num_points);
  }
}

TEST(SyntheticScene, OcclusionIsCounted) {
  SceneOptions o;
  int occluded = 0, total = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    for (const auto& obj : generate_scene(o, seed).objects) {
      occluded += obj.occluded > 0;
      ++total;
    }
  }
  EXPECT_GT(total, 30);
  EXPECT_GT(occluded, 0);
  EXPECT_LT(occluded, total);
}

TEST(SynthKitti, WritesAKittiLayoutThatTheReaderLoadsConsistently) {
  const std::string dir = ddp3d::testing::make_temp_dir("ddp3d-synth-");
  SynthKittiOptions o;
  o.scenes = 5;
  o.seed = 7;
  o.val_fraction = 0.4;
  const auto stats = write_synthetic_kitti(dir, o);
  EXPECT_EQ(stats.scenes, 5);
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::exists(dir + "/training/velodyne/000004.bin"));
  EXPECT_TRUE(fs::exists(dir + "/training/label_2/000004.txt"));
  EXPECT_TRUE(fs::exists(dir + "/training/calib/000004.txt"));
  KittiDataset train(dir, "train", {"Car", "Pedestrian", "Cyclist"});
  KittiDataset val(dir, "val", {"Car", "Pedestrian", "Cyclist"});
  EXPECT_EQ(train.size(), 3u);
  EXPECT_EQ(val.size(), 2u);
  EXPECT_EQ(val.ids().front(), "000003");
  // The labels, read back through calib, sit on the points the scan put there.
  const auto scene = generate_scene(o.scene, scene_seed(7, 0));
  const KittiFrame f = train.load(0);
  EXPECT_EQ(f.points.size(0), scene.num_points());
  ASSERT_EQ(f.gt_boxes.size(0), static_cast<std::int64_t>(scene.objects.size()));
  for (std::int64_t k = 0; k < f.gt_boxes.size(0); ++k) {
    const auto inside = points_in_box(f.points, f.gt_boxes[k], 0.1);
    EXPECT_GE(inside, scene.objects[static_cast<std::size_t>(k)].num_points * 8 / 10)
        << "box " << k;
  }
}

TEST(KittiDataset, MissingSplitNamesTheFile) {
  const std::string dir = ddp3d::testing::make_temp_dir("ddp3d-empty-");
  try {
    KittiDataset d(dir, "train", {"Car"});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/ImageSets/train.txt"), std::string::npos);
  }
}

}  // namespace
}  // namespace ddp3d::data
