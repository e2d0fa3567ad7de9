// Presentation of a KittiEvalResult: mmdet3d's printed table and its flat metric names.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "worker/eval/kitti_eval.h"

namespace ddp3d::eval {
namespace {

constexpr const char* kDifficultyNames[3] = {"easy", "moderate", "hard"};
constexpr const char* kRowLabels[kNumMetricsWithAos] = {"bbox", "bev ", "3d  ", "aos "};
constexpr const char* kMetricKeys[kNumMetricsWithAos] = {"2D", "BEV", "3D", "AOS"};

std::array<bool, kNumMetricsWithAos> shown_metrics(const KittiEvalResult& r) {
  return {r.has_bbox, r.has_bev, r.has_3d, r.has_aos};
}

void print_row(std::ostringstream& out, int metric, const char* ap_name,
               const std::array<double, 3>& values) {
  // mmdet3d prints AOS with two decimals and the other metrics with four.
  out << kRowLabels[metric] << ' ' << ap_name << ':' << std::fixed
      << std::setprecision(metric == kAosIndex ? 2 : 4) << values[0] << ", " << values[1] << ", "
      << values[2] << '\n';
}

std::array<double, 3> class_mean(const KittiEvalResult& r, bool ap11, int metric) {
  std::array<double, 3> mean{};
  for (const ClassAp& c : r.classes) {
    const auto& table = ap11 ? c.ap11 : c.ap40;
    for (int d = 0; d < 3; ++d) mean[d] += table[0][metric][d] / r.classes.size();
  }
  return mean;
}

}  // namespace

std::string KittiEvalResult::table() const {
  std::ostringstream out;
  const auto shown = shown_metrics(*this);
  const int settings = has_loose ? 2 : 1;
  for (bool is_ap11 : {true, false}) {
    const char* ap_name = is_ap11 ? "AP11" : "AP40";
    out << "\n----------- " << ap_name << " Results ------------\n\n";
    for (const ClassAp& c : classes) {
      const auto& table = is_ap11 ? c.ap11 : c.ap40;
      for (int s = 0; s < settings; ++s) {
        out << c.name << ' ' << ap_name << '@' << std::fixed << std::setprecision(2)
            << c.min_overlap[s][0] << ", " << c.min_overlap[s][1] << ", " << c.min_overlap[s][2]
            << ":\n";
        for (int m = 0; m < kNumMetricsWithAos; ++m) {
          if (shown[m]) print_row(out, m, ap_name, table[s][m]);
        }
      }
    }
    if (classes.size() > 1) {
      out << "\nOverall " << ap_name << "@easy, moderate, hard:\n";
      for (int m = 0; m < kNumMetricsWithAos; ++m) {
        if (shown[m]) print_row(out, m, ap_name, class_mean(*this, is_ap11, m));
      }
    }
  }
  return out.str();
}

std::map<std::string, double> KittiEvalResult::metrics() const {
  std::map<std::string, double> out;
  const auto shown = shown_metrics(*this);
  const int settings = has_loose ? 2 : 1;
  for (bool is_ap11 : {true, false}) {
    const std::string ap_name = is_ap11 ? "AP11" : "AP40";
    for (const ClassAp& c : classes) {
      const auto& table = is_ap11 ? c.ap11 : c.ap40;
      for (int s = 0; s < settings; ++s) {
        for (int m = 0; m < kNumMetricsWithAos; ++m) {
          if (!shown[m]) continue;
          for (int d = 0; d < 3; ++d) {
            out["KITTI/" + c.name + "_" + kMetricKeys[m] + "_" + ap_name + "_" +
                kDifficultyNames[d] + (s == 0 ? "_strict" : "_loose")] = table[s][m][d];
          }
        }
      }
    }
    if (classes.size() > 1) {
      for (int m = 0; m < kNumMetricsWithAos; ++m) {
        if (!shown[m]) continue;
        const auto mean = class_mean(*this, is_ap11, m);
        for (int d = 0; d < 3; ++d) {
          out["KITTI/Overall_" + std::string(kMetricKeys[m]) + "_" + ap_name + "_" +
              kDifficultyNames[d]] = mean[d];
        }
      }
    }
  }
  return out;
}

std::string KittiEvalResult::metrics_json() const {
  std::ostringstream out;
  out << std::setprecision(17) << '{';
  bool first = true;
  for (const auto& [name, value] : metrics()) {
    // Metric names are plain ASCII without quotes or backslashes: no escaping needed.
    out << (first ? "" : ", ") << '"' << name << "\": " << value;
    first = false;
  }
  out << '}';
  return out.str();
}

}  // namespace ddp3d::eval
