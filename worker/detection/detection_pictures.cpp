#include "worker/detection/detection_pictures.h"

#include <ATen/ATen.h>

#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/io/atomic_file.h"
#include "common/parse_number.h"
#include "worker/data/kitti_calib.h"
#include "worker/data/kitti_label.h"
#include "worker/data/lidar_box.h"
#include "worker/detection/kitti_eval_record.h"
#include "worker/visual/bev_render.h"
#include "worker/visual/png_codec.h"

namespace ddp3d::detection {

namespace {

constexpr double kMarginMetres = 2;
constexpr double kPixelsPerMetre = 10;

std::vector<std::string> split_classes(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string c; std::getline(ss, c, ',');) out.push_back(c);
  return out;
}

std::vector<visual::BevPoint> bev_points(const at::Tensor& points) {
  const at::Tensor p = points.to(at::kCPU, at::kFloat).contiguous();
  std::vector<visual::BevPoint> out;
  if (p.dim() != 2 || p.size(1) < 3) return out;
  const auto a = p.accessor<float, 2>();
  out.reserve(static_cast<std::size_t>(p.size(0)));
  for (std::int64_t i = 0; i < p.size(0); ++i) {
    out.push_back({a[i][0], a[i][1], a[i][2], p.size(1) > 3 ? a[i][3] : 0.F});
  }
  return out;
}

std::vector<visual::BevBox> ground_truth(const at::Tensor& packed, const std::string& types,
                                         const at::Tensor& packed_calib) {
  const data::KittiCalib calib = unpack_calib(packed_calib.to(at::kCPU));
  std::vector<visual::BevBox> out;
  for (const eval::EvalObject& e : unpack_objects(packed.to(at::kCPU), types)) {
    if (e.type == "DontCare") continue;
    const data::LidarBox b = data::lidar_box_from_kitti(to_kitti_object(e, false), calib);
    out.push_back({b.x, b.y, b.l, b.w, b.yaw, 0});
  }
  return out;
}

std::vector<visual::BevBox> predicted(const engine::Sample& prediction) {
  const at::Tensor b =
      prediction.tensor("bboxes_3d").to(at::kCPU, at::kDouble).contiguous().view({-1, 7});
  const at::Tensor s = prediction.tensor("scores_3d").to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor l = prediction.tensor("labels_3d").to(at::kCPU, at::kLong).contiguous();
  if (s.numel() != b.size(0) || l.numel() != b.size(0)) {
    throw std::invalid_argument("--show-dir: predictions of " + std::to_string(b.size(0)) +
                                " boxes with " + std::to_string(s.numel()) + " scores and " +
                                std::to_string(l.numel()) + " labels");
  }
  const auto ba = b.accessor<double, 2>();
  const double* sp = s.data_ptr<double>();
  const std::int64_t* lp = l.data_ptr<std::int64_t>();
  std::vector<visual::BevBox> out;
  for (std::int64_t k = 0; k < b.size(0); ++k) {
    out.push_back(
        {ba[k][0], ba[k][1], ba[k][3], ba[k][4], ba[k][6], static_cast<int>(lp[k]), sp[k]});
  }
  return out;
}

}  // namespace

int write_detection_pictures(const engine::Batch& batch,
                             const std::vector<engine::Sample>& predictions,
                             const engine::DrawOptions& options,
                             const std::array<double, 6>& range) {
  const auto& points = batch.list("points");
  const auto& gt = batch.list("eval_gt");
  const auto& calib = batch.list("calib");
  if (predictions.size() != points.size()) {
    throw std::invalid_argument("--show-dir: " + std::to_string(predictions.size()) +
                                " predictions for a batch of " + std::to_string(points.size()));
  }
  const visual::BevView view = visual::BevView::around(range, kMarginMetres, kPixelsPerMetre);
  visual::BevStyle style;
  style.z_min = range[2];
  style.z_max = range[5];
  style.score_threshold = options.score_threshold;
  int written = 0;
  for (std::size_t b = 0; b < predictions.size(); ++b) {
    const auto& meta = batch.meta.at(b);
    const std::int64_t index = parse_integer("sample_idx", meta.at("sample_idx"), 0,
                                             std::numeric_limits<std::int64_t>::max());
    if (options.count >= 0 && index >= options.count) continue;
    visual::BevScene scene;
    scene.points = bev_points(points[b]);
    scene.ground_truth = ground_truth(gt[b], meta.at("gt_types"), calib[b]);
    scene.predictions = predicted(predictions[b]);
    scene.class_names = split_classes(meta.at("classes"));
    scene.detection_range = range;
    const std::string& id = meta.at("frame_id");
    scene.title = id + "  ground truth " + std::to_string(scene.ground_truth.size()) +
                  "  predictions >= " + std::to_string(options.score_threshold).substr(0, 4);
    const visual::RgbImage image = visual::render_bev(scene, view, style);
    io::write_file_atomically(options.dir / (id + ".png"), visual::encode_png(image));
    ++written;
  }
  return written;
}

int write_training_sample_picture(const engine::Sample& sample, const std::filesystem::path& file,
                                  const std::array<double, 6>& range,
                                  const std::vector<std::string>& classes,
                                  const std::string& title) {
  visual::BevScene scene;
  scene.points = bev_points(sample.tensor("points"));
  if (sample.tensors.contains("gt_bboxes_3d")) {
    const at::Tensor b =
        sample.tensor("gt_bboxes_3d").to(at::kCPU, at::kDouble).contiguous().view({-1, 7});
    const at::Tensor l = sample.tensor("gt_labels_3d").to(at::kCPU, at::kLong).contiguous();
    if (l.numel() != b.size(0)) {
      throw std::invalid_argument("a sample of " + std::to_string(b.size(0)) + " boxes with " +
                                  std::to_string(l.numel()) + " labels");
    }
    const auto ba = b.accessor<double, 2>();
    const std::int64_t* lp = l.data_ptr<std::int64_t>();
    for (std::int64_t k = 0; k < b.size(0); ++k) {
      scene.ground_truth.push_back(
          {ba[k][0], ba[k][1], ba[k][3], ba[k][4], ba[k][6], static_cast<int>(lp[k])});
    }
  }
  scene.class_names = classes;
  scene.detection_range = range;
  scene.title = title + "  boxes " + std::to_string(scene.ground_truth.size());
  visual::BevStyle style;
  style.z_min = range[2];
  style.z_max = range[5];
  const visual::BevView view = visual::BevView::around(range, kMarginMetres, kPixelsPerMetre);
  io::write_file_atomically(file, visual::encode_png(visual::render_bev(scene, view, style)));
  return static_cast<int>(scene.ground_truth.size());
}

}  // namespace ddp3d::detection
