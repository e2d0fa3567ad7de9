#include "worker/data/kitti_calib.h"

#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "worker/data/strict_number.h"
#include "worker/data/text_file.h"

namespace ddp3d::data {
namespace {

// Focal lengths and principal points are ~1e3 pixels; rotations and translations are small.
constexpr double kMaxCalibValue = 1e6;
constexpr std::size_t kMaxRowValues = 16;

// Rigid 3x4 transform [R | t] applied to p.
Vec3 apply(const std::array<double, 12>& m, const Vec3& p) {
  return {m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3],
          m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + m[7],
          m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + m[11]};
}

Vec3 apply3(const std::array<double, 9>& m, const Vec3& p) {
  return {m[0] * p[0] + m[1] * p[1] + m[2] * p[2], m[3] * p[0] + m[4] * p[1] + m[5] * p[2],
          m[6] * p[0] + m[7] * p[1] + m[8] * p[2]};
}

std::array<double, 9> inverse3(const std::array<double, 9>& m) {
  const double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                     m[2] * (m[3] * m[7] - m[4] * m[6]);
  if (std::abs(det) < 1e-12) throw std::runtime_error("calibration matrix is singular");
  const double s = 1.0 / det;
  return {(m[4] * m[8] - m[5] * m[7]) * s, (m[2] * m[7] - m[1] * m[8]) * s,
          (m[1] * m[5] - m[2] * m[4]) * s, (m[5] * m[6] - m[3] * m[8]) * s,
          (m[0] * m[8] - m[2] * m[6]) * s, (m[2] * m[3] - m[0] * m[5]) * s,
          (m[3] * m[7] - m[4] * m[6]) * s, (m[1] * m[6] - m[0] * m[7]) * s,
          (m[0] * m[4] - m[1] * m[3]) * s};
}

template <std::size_t N>
void write_row(std::ostringstream& out, const std::string& key, const std::array<double, N>& v) {
  out << key << ":";
  for (double x : v) out << " " << std::scientific << std::setprecision(12) << x;
  out << "\n";
}

}  // namespace

Vec3 KittiCalib::lidar_to_camera(const Vec3& p) const {
  return apply3(R0_rect, apply(Tr_velo_to_cam, p));
}

Vec3 KittiCalib::camera_to_lidar(const Vec3& p) const {
  const Vec3 unrectified = apply3(inverse3(R0_rect), p);
  // Tr is [R | t]; its inverse maps q to R^-1 (q - t).
  const std::array<double, 9> r{Tr_velo_to_cam[0], Tr_velo_to_cam[1], Tr_velo_to_cam[2],
                                Tr_velo_to_cam[4], Tr_velo_to_cam[5], Tr_velo_to_cam[6],
                                Tr_velo_to_cam[8], Tr_velo_to_cam[9], Tr_velo_to_cam[10]};
  const Vec3 shifted{unrectified[0] - Tr_velo_to_cam[3], unrectified[1] - Tr_velo_to_cam[7],
                     unrectified[2] - Tr_velo_to_cam[11]};
  return apply3(inverse3(r), shifted);
}

std::array<double, 3> KittiCalib::project_to_image(const Vec3& c) const {
  const Vec3 h = apply(P2, c);
  return {h[0] / h[2], h[1] / h[2], h[2]};
}

KittiCalib parse_kitti_calib(const std::string& text, const std::string& path) {
  std::map<std::string, std::pair<std::vector<double>, int>> rows;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      throw std::runtime_error(path + ":" + std::to_string(line_no) + ": expected 'KEY: numbers'");
    }
    std::vector<double> values;
    std::istringstream nums(line.substr(colon + 1));
    std::string token;
    while (nums >> token) {
      const auto v = parse_bounded_number(token, -kMaxCalibValue, kMaxCalibValue);
      if (!v) {
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " +
                                 line.substr(0, colon) + ": '" + token.substr(0, 64) +
                                 "' is not a number (finite, magnitude <= 1e6)");
      }
      // A row longer than any KITTI key is garbage, not a reason to keep reading numbers.
      if (values.size() == kMaxRowValues) {
        throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " +
                                 line.substr(0, colon) + ": more than " +
                                 std::to_string(kMaxRowValues) + " numbers");
      }
      values.push_back(*v);
    }
    rows[line.substr(0, colon)] = {values, line_no};
  }
  auto take = [&]<std::size_t N>(const std::string& key, std::array<double, N>& out,
                                 bool required) {
    const auto it = rows.find(key);
    if (it == rows.end()) {
      if (required) throw std::runtime_error(path + ": missing key " + key);
      return;
    }
    if (it->second.first.size() != N) {
      throw std::runtime_error(path + ":" + std::to_string(it->second.second) + ": " + key +
                               ": expected " + std::to_string(N) + " numbers, got " +
                               std::to_string(it->second.first.size()));
    }
    std::copy(it->second.first.begin(), it->second.first.end(), out.begin());
  };
  KittiCalib c;
  take("P2", c.P2, true);
  take("R0_rect", c.R0_rect, true);
  take("Tr_velo_to_cam", c.Tr_velo_to_cam, true);
  take("Tr_imu_to_velo", c.Tr_imu_to_velo, false);
  return c;
}

KittiCalib read_kitti_calib(const std::string& path) {
  return parse_kitti_calib(read_file(path, kMaxCalibBytes, "KITTI calibration file"), path);
}

std::string format_kitti_calib(const KittiCalib& c) {
  std::ostringstream out;
  // P0, P1 and P3 are written as P2 so that tools expecting all four keys read the file.
  for (const char* key : {"P0", "P1", "P2", "P3"}) write_row(out, key, c.P2);
  write_row(out, "R0_rect", c.R0_rect);
  write_row(out, "Tr_velo_to_cam", c.Tr_velo_to_cam);
  write_row(out, "Tr_imu_to_velo", c.Tr_imu_to_velo);
  return out.str();
}

KittiCalib typical_kitti_calib() {
  KittiCalib c;
  c.P2 = {721.5377, 0.0,       609.5593, 44.85728, 0.0, 721.5377,
          172.854,  0.2163791, 0.0,      0.0,      1.0, 0.002745884};
  c.R0_rect = {0.9999239,    0.00983776,  -0.007445048, -0.009869795, 0.9999421,
               -0.004278459, 0.007402527, 0.004351614,  0.9999631};
  c.Tr_velo_to_cam = {0.007533745, -0.9999714,   -0.000616602, -0.004069766,
                      0.01480249,  0.0007280733, -0.9998902,   -0.07631618,
                      0.9998621,   0.007523790,  0.01480755,   -0.2717806};
  c.Tr_imu_to_velo = {0.9999976,     0.0007553071, -0.002035826, -0.8086759,
                      -0.0007854027, 0.9998898,    -0.01482298,  0.3195559,
                      0.002024406,   0.01482454,   0.9998881,    -0.7997231};
  return c;
}

}  // namespace ddp3d::data
