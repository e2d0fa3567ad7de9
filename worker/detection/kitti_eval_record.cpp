#include "worker/detection/kitti_eval_record.h"

#include <ATen/ATen.h>

#include <sstream>
#include <stdexcept>

namespace ddp3d::detection {
namespace {
constexpr std::int64_t kObjectWidth = 15;
constexpr std::int64_t kCalibWidth = 36;
}  // namespace

at::Tensor pack_objects(const std::vector<data::KittiObject>& objects) {
  at::Tensor out =
      at::zeros({static_cast<std::int64_t>(objects.size()), kObjectWidth}, at::kDouble);
  auto a = out.accessor<double, 2>();
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const data::KittiObject& o = objects[i];
    const auto r = static_cast<std::int64_t>(i);
    const double row[kObjectWidth] = {o.truncated,     static_cast<double>(o.occluded),
                                      o.alpha,         o.bbox[0],
                                      o.bbox[1],       o.bbox[2],
                                      o.bbox[3],       o.dimensions[0],
                                      o.dimensions[1], o.dimensions[2],
                                      o.location[0],   o.location[1],
                                      o.location[2],   o.rotation_y,
                                      o.score};
    for (std::int64_t c = 0; c < kObjectWidth; ++c) a[r][c] = row[c];
  }
  return out;
}

std::string types_to_meta(const std::vector<data::KittiObject>& objects) {
  std::string out;
  for (std::size_t i = 0; i < objects.size(); ++i) out += (i ? "," : "") + objects[i].type;
  return out;
}

std::vector<eval::EvalObject> unpack_objects(const at::Tensor& packed, const std::string& types) {
  std::vector<std::string> names;
  std::stringstream ss(types);
  for (std::string t; std::getline(ss, t, ',');) names.push_back(t);
  const at::Tensor p = packed.to(at::kDouble).contiguous();
  if (p.dim() != 2 || p.size(1) != kObjectWidth ||
      p.size(0) != static_cast<std::int64_t>(names.size())) {
    throw std::invalid_argument("evaluation record: " + std::to_string(names.size()) +
                                " object types for ground truth of shape " +
                                std::to_string(p.dim() == 2 ? p.size(0) : -1) + " rows");
  }
  auto a = p.accessor<double, 2>();
  std::vector<eval::EvalObject> out(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto r = static_cast<std::int64_t>(i);
    eval::EvalObject& o = out[i];
    o.type = names[i];
    o.truncated = a[r][0];
    o.occluded = static_cast<int>(a[r][1]);
    o.alpha = a[r][2];
    o.bbox = {a[r][3], a[r][4], a[r][5], a[r][6]};
    o.dimensions = {a[r][7], a[r][8], a[r][9]};
    o.location = {a[r][10], a[r][11], a[r][12]};
    o.rotation_y = a[r][13];
    o.score = a[r][14];
  }
  return out;
}

eval::EvalObject to_eval_object(const data::KittiObject& object) {
  eval::EvalObject e;
  e.type = object.type;
  e.truncated = object.truncated;
  e.occluded = object.occluded;
  e.alpha = object.alpha;
  e.bbox = object.bbox;
  e.dimensions = object.dimensions;
  e.location = object.location;
  e.rotation_y = object.rotation_y;
  e.score = object.has_score ? object.score : 0.0;
  return e;
}

data::KittiObject to_kitti_object(const eval::EvalObject& object, bool with_score) {
  data::KittiObject o;
  o.type = object.type;
  o.truncated = object.truncated;
  o.occluded = object.occluded;
  o.alpha = object.alpha;
  o.bbox = object.bbox;
  o.dimensions = object.dimensions;
  o.location = object.location;
  o.rotation_y = object.rotation_y;
  o.score = object.score;
  o.has_score = with_score;
  return o;
}

at::Tensor pack_calib(const data::KittiCalib& calib) {
  at::Tensor out = at::zeros({kCalibWidth}, at::kDouble);
  double* d = out.data_ptr<double>();
  for (std::size_t i = 0; i < 12; ++i) d[i] = calib.P2[i];
  for (std::size_t i = 0; i < 9; ++i) d[12 + i] = calib.R0_rect[i];
  for (std::size_t i = 0; i < 12; ++i) d[21 + i] = calib.Tr_velo_to_cam[i];
  return out;
}

data::KittiCalib unpack_calib(const at::Tensor& packed) {
  const at::Tensor p = packed.to(at::kDouble).contiguous();
  if (p.numel() != kCalibWidth) {
    throw std::invalid_argument("evaluation record: calib has " + std::to_string(p.numel()) +
                                " values, expected " + std::to_string(kCalibWidth));
  }
  const double* d = p.data_ptr<double>();
  data::KittiCalib c;
  for (std::size_t i = 0; i < 12; ++i) c.P2[i] = d[i];
  for (std::size_t i = 0; i < 9; ++i) c.R0_rect[i] = d[12 + i];
  for (std::size_t i = 0; i < 12; ++i) c.Tr_velo_to_cam[i] = d[21 + i];
  return c;
}

}  // namespace ddp3d::detection
