// Cross-check against mmdetection3d's own kitti_eval: a random 80-frame scene (every class,
// Van / Person_sitting / Truck / DontCare, occlusion and truncation levels, jittered and
// flipped detections, false positives) and the metrics and printout mmdet3d produced for it
// (data/make_mmdet3d_golden.py wrote them). Every number and every byte of the table must match.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "worker/eval/kitti_eval.h"

namespace ddp3d::eval {
namespace {

std::string data_path(const std::string& name) {
  return std::string(DDP3D_EVAL_TEST_DATA) + "/" + name;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// scene.txt: "F <id>" starts a frame; "G|D <type> <truncated> <occluded> <alpha> <bbox x4>
// <h w l> <x y z> <rotation_y> <score>" adds a ground-truth object or a detection.
KittiEvalFrames read_scene(const std::string& path) {
  std::istringstream in(read_all(path));
  KittiEvalFrames frames;
  EvalFrame frame;
  bool open = false;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream fields(line);
    std::string tag;
    fields >> tag;
    if (tag == "F") {
      if (open) frames.add(frame);
      frame = EvalFrame{};
      fields >> frame.frame_id;
      open = true;
      continue;
    }
    EvalObject o;
    fields >> o.type >> o.truncated >> o.occluded >> o.alpha;
    for (double& v : o.bbox) fields >> v;
    for (double& v : o.dimensions) fields >> v;
    for (double& v : o.location) fields >> v;
    fields >> o.rotation_y >> o.score;
    if (!fields || !open || (tag != "G" && tag != "D")) {
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": malformed line");
    }
    (tag == "G" ? frame.ground_truth : frame.detections).push_back(o);
  }
  if (open) frames.add(frame);
  return frames;
}

std::map<std::string, double> read_metrics(const std::string& path) {
  std::istringstream in(read_all(path));
  std::map<std::string, double> out;
  std::string name;
  double value;
  while (in >> name >> value) out[name] = value;
  return out;
}

TEST(KittiEvalVsMmdet3d, SameMetricsAndTable) {
  const KittiEvalFrames frames = read_scene(data_path("scene.txt"));
  ASSERT_EQ(frames.size(), 80u);
  const KittiEvalResult result = evaluate_kitti(frames);
  ASSERT_TRUE(result.has_aos);

  const auto expected = read_metrics(data_path("mmdet3d_metrics.txt"));
  ASSERT_EQ(expected.size(), 126u);  // mmdet3d logs 2D/BEV/3D, not AOS
  const auto got = result.metrics();
  for (const auto& [name, value] : expected) {
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_NEAR(got.at(name), value, 1e-9) << name;
  }
  EXPECT_EQ(result.table(), read_all(data_path("mmdet3d_table.txt")));
  std::cout << "Car 3D AP40 moderate strict: " << got.at("KITTI/Car_3D_AP40_moderate_strict")
            << " (mmdet3d " << expected.at("KITTI/Car_3D_AP40_moderate_strict") << ")\n";
}

}  // namespace
}  // namespace ddp3d::eval
