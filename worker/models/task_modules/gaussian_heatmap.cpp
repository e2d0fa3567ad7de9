#include "worker/models/task_modules/gaussian_heatmap.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ddp3d::models {

double gaussian_radius(double height, double width, double min_overlap) {
  if (!(height > 0) || !(width > 0) || !(min_overlap > 0) || !(min_overlap < 1))
    throw std::invalid_argument("gaussian_radius: needs height, width > 0 and 0 < overlap < 1");
  // Both corners shifted outward, one inward, or both inward: the largest shift r that keeps
  // IoU >= min_overlap solves a quadratic a·r² + b·r + c = 0 in each case.
  const double b1 = height + width;
  const double c1 = width * height * (1 - min_overlap) / (1 + min_overlap);
  const double r1 = (b1 + std::sqrt(b1 * b1 - 4 * c1)) / 2;
  const double a2 = 4;
  const double b2 = 2 * (height + width);
  const double c2 = (1 - min_overlap) * width * height;
  const double r2 = (b2 + std::sqrt(b2 * b2 - 4 * a2 * c2)) / 2;
  const double a3 = 4 * min_overlap;
  const double b3 = -2 * min_overlap * (height + width);
  const double c3 = (min_overlap - 1) * width * height;
  const double r3 = (b3 + std::sqrt(b3 * b3 - 4 * a3 * c3)) / 2;
  return std::min({r1, r2, r3});
}

void draw_heatmap_gaussian(at::Tensor& heatmap, int64_t x, int64_t y, int64_t radius) {
  TORCH_CHECK(heatmap.dim() == 2, "draw_heatmap_gaussian: heatmap must be [H, W]");
  TORCH_CHECK(radius >= 0, "draw_heatmap_gaussian: radius must be >= 0");
  const int64_t height = heatmap.size(0);
  const int64_t width = heatmap.size(1);
  if (x < 0 || y < 0 || x >= width || y >= height) return;
  // Only the part of the Gaussian that lies on the map is computed, so a radius far beyond it
  // (a huge box, a huge min_radius) costs no more than the map.
  const double sigma = (2 * static_cast<double>(radius) + 1) / 6;
  const int64_t left = std::min(x, radius);
  const int64_t right = radius < width - x ? radius + 1 : width - x;
  const int64_t top = std::min(y, radius);
  const int64_t bottom = radius < height - y ? radius + 1 : height - y;
  const auto f64 = heatmap.options().dtype(at::kDouble);
  const at::Tensor dy = at::arange(-top, bottom, f64);
  const at::Tensor dx = at::arange(-left, right, f64);
  const at::Tensor peak =
      at::exp(-(dy.pow(2).unsqueeze(1) + dx.pow(2).unsqueeze(0)) / (2 * sigma * sigma))
          .to(heatmap.scalar_type());
  at::Tensor region = heatmap.slice(0, y - top, y + bottom).slice(1, x - left, x + right);
  region.copy_(at::maximum(region, peak));
}

}  // namespace ddp3d::models
