#include "worker/data/kitti_label.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "worker/data/strict_number.h"
#include "worker/data/text_file.h"

namespace ddp3d::data {
namespace {

constexpr double kMaxPixel = 1e7;     // 2D box corners, pixels
constexpr double kMaxSize = 1e3;      // box dimensions, metres
constexpr double kMaxDistance = 1e5;  // box centres, metres
constexpr double kMaxScore = 1e6;

std::string format_bound(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

std::vector<KittiObject> parse_kitti_labels(const std::string& text, const std::string& path) {
  std::vector<KittiObject> objects;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string token; fields >> token;) f.push_back(token);
    if (f.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    if (f.size() != 15 && f.size() != 16) {
      throw std::runtime_error(where + "expected 15 or 16 fields, got " + std::to_string(f.size()));
    }
    // Ranges wide enough for KITTI's DontCare rows (-1, -10, -1000) and real objects.
    auto number = [&](std::size_t i, const char* name, double min, double max) {
      if (const auto v = parse_bounded_number(f[i], min, max)) return *v;
      throw std::runtime_error(where + name + " (field " + std::to_string(i + 1) + "): '" +
                               f[i].substr(0, 64) + "' is not a number (finite, in [" +
                               format_bound(min) + ", " + format_bound(max) + "])");
    };
    KittiObject o;
    o.type = f[0];
    o.truncated = number(1, "truncated", -1, 1);
    const double occluded = number(2, "occluded", -1, 3);
    if (occluded != std::floor(occluded)) {
      throw std::runtime_error(where + "occluded (field 3): '" + f[2] + "' is not an integer");
    }
    o.occluded = static_cast<int>(occluded);
    o.alpha = number(3, "alpha", -10, 10);
    for (int i = 0; i < 4; ++i) o.bbox[i] = number(4 + i, "bbox", -kMaxPixel, kMaxPixel);
    for (int i = 0; i < 3; ++i) o.dimensions[i] = number(8 + i, "dimensions", -1, kMaxSize);
    for (int i = 0; i < 3; ++i) {
      o.location[i] = number(11 + i, "location", -kMaxDistance, kMaxDistance);
    }
    o.rotation_y = number(14, "rotation_y", -10, 10);
    if (f.size() == 16) {
      o.score = number(15, "score", -kMaxScore, kMaxScore);
      o.has_score = true;
    }
    objects.push_back(o);
  }
  return objects;
}

std::vector<KittiObject> read_kitti_labels(const std::string& path) {
  return parse_kitti_labels(read_file(path, kMaxLabelBytes, "KITTI label file"), path);
}

std::string format_kitti_labels(const std::vector<KittiObject>& objects, KittiLabelStyle style) {
  const bool result = style == KittiLabelStyle::kResult;
  const int decimals = result ? 4 : 2;
  std::string out;
  char buf[512];
  auto append = [&](const char* format, auto... values) {
    const int n = std::snprintf(buf, sizeof(buf), format, values...);
    out.append(buf, static_cast<std::size_t>(n));
  };
  for (const auto& o : objects) {
    out += o.type;
    if (result) {
      out += " -1 -1";
    } else {
      append(" %.2f %d", o.truncated, o.occluded);
    }
    for (const double v :
         {o.alpha, o.bbox[0], o.bbox[1], o.bbox[2], o.bbox[3], o.dimensions[0], o.dimensions[1],
          o.dimensions[2], o.location[0], o.location[1], o.location[2], o.rotation_y}) {
      append(" %.*f", decimals, v);
    }
    if (o.has_score) append(" %.4f", o.score);
    out += '\n';
  }
  return out;
}

}  // namespace ddp3d::data
