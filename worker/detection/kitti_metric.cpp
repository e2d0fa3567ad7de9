#include "worker/detection/kitti_metric.h"

#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "common/io/atomic_file.h"
#include "common/log.h"
#include "worker/data/lidar_box.h"
#include "worker/detection/detection_pictures.h"
#include "worker/detection/kitti_eval_record.h"
#include "worker/eval/kitti_projection.h"

namespace ddp3d::detection {

std::vector<eval::EvalObject> detections_to_kitti(const at::Tensor& boxes, const at::Tensor& scores,
                                                  const at::Tensor& labels,
                                                  const data::KittiCalib& calib,
                                                  const std::vector<std::string>& class_names,
                                                  const std::array<double, 6>& limit_range) {
  const at::Tensor b = boxes.to(at::kCPU, at::kDouble).contiguous().view({-1, 7});
  const at::Tensor s = scores.to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor l = labels.to(at::kCPU, at::kLong).contiguous();
  auto ba = b.accessor<double, 2>();
  auto sa = s.accessor<double, 1>();
  auto la = l.accessor<std::int64_t, 1>();
  eval::Projection p2{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) p2[r][c] = calib.P2[static_cast<std::size_t>(r * 4 + c)];
  std::vector<eval::EvalObject> out;
  for (std::int64_t k = 0; k < b.size(0); ++k) {
    const data::LidarBox box{ba[k][0], ba[k][1], ba[k][2], ba[k][3], ba[k][4], ba[k][5], ba[k][6]};
    const double centre[3] = {box.x, box.y, box.z};
    bool inside = true;
    for (int d = 0; d < 3; ++d)
      inside = inside && centre[d] > limit_range[d] && centre[d] < limit_range[d + 3];
    if (!inside) continue;
    const std::int64_t label = la[k];
    if (label < 0 || label >= static_cast<std::int64_t>(class_names.size())) {
      throw std::invalid_argument("KittiMetric: predicted label " + std::to_string(label) +
                                  " is not a class index (" + std::to_string(class_names.size()) +
                                  " classes)");
    }
    const data::KittiObject o =
        data::kitti_object_from_lidar_box(box, calib, class_names[static_cast<std::size_t>(label)]);
    const auto image_box = eval::project_box_to_image(o.location, o.dimensions, o.rotation_y, p2,
                                                      data::kImageWidth, data::kImageHeight);
    if (!image_box) continue;
    eval::EvalObject e = to_eval_object(o);
    e.bbox = *image_box;
    e.score = sa[k];
    out.push_back(std::move(e));
  }
  return out;
}

void KittiMetric::process(const engine::Batch& batch,
                          const std::vector<engine::Sample>& predictions) {
  const auto& gt = batch.list("eval_gt");
  const auto& calib = batch.list("calib");
  if (predictions.size() != gt.size()) {
    throw std::invalid_argument("KittiMetric: " + std::to_string(predictions.size()) +
                                " predictions for a batch of " + std::to_string(gt.size()));
  }
  for (std::size_t b = 0; b < predictions.size(); ++b) {
    engine::Sample record;
    for (const char* key : {"bboxes_3d", "scores_3d", "labels_3d"})
      record.tensors[key] = predictions[b].tensor(key).to(at::kCPU);
    record.tensors["eval_gt"] = gt[b].to(at::kCPU);
    record.tensors["calib"] = calib[b].to(at::kCPU);
    record.meta = batch.meta.at(b);
    add_result(std::move(record));
  }
}

void write_kitti_submission(const std::filesystem::path& dir, const std::string& frame_id,
                            const std::vector<eval::EvalObject>& detections) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("submission_prefix " + dir.string() + ": " + ec.message());
  std::vector<data::KittiObject> objects;
  objects.reserve(detections.size());
  for (const eval::EvalObject& d : detections) objects.push_back(to_kitti_object(d, true));
  io::write_file_atomically(dir / (frame_id + ".txt"),
                            data::format_kitti_labels(objects, data::KittiLabelStyle::kResult));
}

void KittiMetric::draw(const engine::Batch& batch, const std::vector<engine::Sample>& predictions,
                       const engine::DrawOptions& options) {
  write_detection_pictures(batch, predictions, options, limit_range_);
}

engine::MetricMap KittiMetric::compute_metrics(const std::vector<engine::Sample>& results) {
  if (results.empty()) throw std::invalid_argument("KittiMetric: no results to evaluate");
  std::vector<std::string> classes;
  {
    std::stringstream ss(results.front().meta.at("classes"));
    for (std::string c; std::getline(ss, c, ',');) classes.push_back(c);
  }
  eval::KittiEvalFrames frames;
  std::size_t detections = 0;
  double score_sum = 0;
  for (const engine::Sample& r : results) {
    eval::EvalFrame f;
    f.frame_id = std::stoll(r.meta.at("sample_idx"));
    f.ground_truth = unpack_objects(r.tensor("eval_gt"), r.meta.at("gt_types"));
    f.detections =
        detections_to_kitti(r.tensor("bboxes_3d"), r.tensor("scores_3d"), r.tensor("labels_3d"),
                            unpack_calib(r.tensor("calib")), classes, limit_range_);
    detections += f.detections.size();
    for (const eval::EvalObject& d : f.detections) score_sum += d.score;
    if (!options_.submission_prefix.empty()) {
      write_kitti_submission(options_.submission_prefix, r.meta.at("frame_id"), f.detections);
    }
    frames.add(std::move(f));
  }
  if (!options_.submission_prefix.empty()) {
    log::info("wrote KITTI result files of " + std::to_string(frames.size()) + " frames to " +
              options_.submission_prefix);
  }
  // Not KITTI metrics: the count and mean confidence of the scored detections, so two
  // evaluations of one checkpoint can be compared even where every AP is still 0.
  const double mean_score = detections > 0 ? score_sum / static_cast<double>(detections) : 0.0;
  if (options_.format_only) {
    return {{"KITTI/num_detections", static_cast<double>(detections)},
            {"KITTI/mean_score", mean_score}};
  }
  eval::KittiEvalOptions options;
  options.classes = classes;
  last_ = eval::evaluate_kitti(frames, options);
  log::info("KITTI evaluation of " + std::to_string(frames.size()) + " frames:\n" + last_.table());
  engine::MetricMap metrics = last_.metrics();
  metrics["KITTI/num_detections"] = static_cast<double>(detections);
  metrics["KITTI/mean_score"] = mean_score;
  return metrics;
}

std::optional<engine::KeyMetric> KittiMetric::key_metric(const engine::MetricMap& metrics) const {
  for (const char* ap : {"AP40", "AP11"}) {
    const std::string overall = std::string("KITTI/Overall_3D_") + ap + "_moderate";
    if (metrics.contains(overall)) return engine::KeyMetric{overall, true};
    const std::string suffix = std::string("_3D_") + ap + "_moderate_strict";
    for (const auto& [name, value] : metrics) {
      if (name.rfind("KITTI/", 0) == 0 && name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        return engine::KeyMetric{name, true};
    }
  }
  return std::nullopt;
}

}  // namespace ddp3d::detection
