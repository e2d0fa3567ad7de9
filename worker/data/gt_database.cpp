#include "worker/data/gt_database.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "common/io/atomic_file.h"
#include "worker/data/point_cloud_file.h"
#include "worker/data/strict_number.h"
#include "worker/data/text_file.h"

namespace ddp3d::data {
namespace fs = std::filesystem;

at::Tensor points_in_box(const at::Tensor& points, const LidarBox& b) {
  const at::Tensor dx = points.select(1, 0) - b.x;
  const at::Tensor dy = points.select(1, 1) - b.y;
  const double c = std::cos(b.yaw), s = std::sin(b.yaw);
  const at::Tensor lx = dx * c + dy * s;
  const at::Tensor ly = -dx * s + dy * c;
  const at::Tensor z = points.select(1, 2);
  return (lx.abs() <= b.l / 2) & (ly.abs() <= b.w / 2) & (z >= b.z) & (z <= b.z + b.h);
}

int kitti_difficulty(const KittiObject& o) {
  const double height = o.bbox[3] - o.bbox[1];
  if (height >= 40 && o.occluded <= 0 && o.truncated <= 0.15) return 0;
  if (height >= 25 && o.occluded <= 1 && o.truncated <= 0.3) return 1;
  if (height >= 25 && o.occluded <= 2 && o.truncated <= 0.5) return 2;
  return -1;
}

std::vector<GtDatabaseEntry> create_gt_database(const std::string& root, const std::string& split,
                                                const std::vector<std::string>& classes) {
  const KittiDataset dataset(root, split, classes);
  const std::string folder = "kitti_gt_database";
  fs::create_directories(fs::path(root) / folder);
  std::vector<GtDatabaseEntry> entries;
  for (std::size_t i = 0; i < dataset.size(); ++i) {
    const KittiFrame f = dataset.load(i);
    int k = 0;
    for (const KittiObject& o : f.objects) {
      ++k;
      if (std::find(classes.begin(), classes.end(), o.type) == classes.end()) continue;
      GtDatabaseEntry e;
      e.type = o.type;
      e.box = lidar_box_from_kitti(o, f.calib);
      e.difficulty = kitti_difficulty(o);
      at::Tensor pts = f.points.index({points_in_box(f.points, e.box)}).clone();
      pts.select(1, 0).sub_(e.box.x);
      pts.select(1, 1).sub_(e.box.y);
      pts.select(1, 2).sub_(e.box.z);
      e.num_points = static_cast<int>(pts.size(0));
      e.path = folder + "/" + f.id + "_" + o.type + "_" + std::to_string(k - 1) + ".bin";
      write_velodyne((fs::path(root) / e.path).string(), pts);
      entries.push_back(std::move(e));
    }
  }
  io::write_file_atomically((fs::path(root) / ("kitti_dbinfos_" + split + ".tsv")).string(),
                            format_gt_database(entries));
  return entries;
}

std::string format_gt_database(const std::vector<GtDatabaseEntry>& entries) {
  std::ostringstream out;
  out.precision(9);
  out << "# type\tpath\tx\ty\tz\tl\tw\th\tyaw\tnum_points\tdifficulty\n";
  for (const auto& e : entries) {
    out << e.type << '\t' << e.path << '\t' << e.box.x << '\t' << e.box.y << '\t' << e.box.z << '\t'
        << e.box.l << '\t' << e.box.w << '\t' << e.box.h << '\t' << e.box.yaw << '\t'
        << e.num_points << '\t' << e.difficulty << '\n';
  }
  return out.str();
}

std::vector<GtDatabaseEntry> read_gt_database(const std::string& index_path) {
  std::istringstream in(read_file(index_path, kMaxGtIndexBytes, "GT database index"));
  std::vector<GtDatabaseEntry> entries;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const std::string where = index_path + ":" + std::to_string(n) + ": ";
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, '\t');) f.push_back(field);
    if (f.size() != 11) {
      throw std::runtime_error(where +
                               "expected type, path, x, y, z, l, w, h, yaw, num_points, "
                               "difficulty separated by tabs");
    }
    // Boxes come from our own writer; a NaN or a kilometre-long box here is a damaged index.
    auto number = [&](std::size_t i, double min, double max) {
      if (const auto v = parse_bounded_number(f[i], min, max)) return *v;
      throw std::runtime_error(where + "field " + std::to_string(i + 1) + ": '" +
                               f[i].substr(0, 64) + "' is not a finite number in range");
    };
    const fs::path relative(f[1]);
    const bool inside = !relative.empty() && relative.is_relative() &&
                        std::none_of(relative.begin(), relative.end(),
                                     [](const fs::path& part) { return part == ".."; });
    if (!inside) {
      throw std::runtime_error(where + "path '" + f[1] + "' must be relative to the data root");
    }
    GtDatabaseEntry e;
    e.type = f[0];
    e.path = f[1];
    e.box.x = number(2, -1e5, 1e5);
    e.box.y = number(3, -1e5, 1e5);
    e.box.z = number(4, -1e5, 1e5);
    e.box.l = number(5, 0, 1e3);
    e.box.w = number(6, 0, 1e3);
    e.box.h = number(7, 0, 1e3);
    e.box.yaw = number(8, -100, 100);
    const double points = number(9, 0, 1e9);
    const double difficulty = number(10, -1, 2);
    if (points != std::floor(points) || difficulty != std::floor(difficulty)) {
      throw std::runtime_error(where + "num_points and difficulty must be integers");
    }
    e.num_points = static_cast<int>(points);
    e.difficulty = static_cast<int>(difficulty);
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace ddp3d::data
