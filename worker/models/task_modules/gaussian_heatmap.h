// CenterPoint's heatmap targets (mmdet3d's gaussian_radius and draw_heatmap_gaussian): each
// object is a 2D Gaussian peak on its class's BEV heatmap, its radius the largest a box may be
// shifted by and still overlap the true box by min_overlap (CornerNet's three cases).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace ddp3d::models {

// The radius (in heatmap cells) for an object of `height` × `width` cells. As mmdet3d, the
// first two cases divide by 2 rather than by 2a, which keeps its trained radii; the third (the
// smallest for the boxes of driving scenes) is the exact root.
double gaussian_radius(double height, double width, double min_overlap);

// Raises `heatmap` [H, W] (float, in place) to a Gaussian of `radius` cells (σ = diameter / 6,
// peak 1) centred at cell (x, y), clipped at the map's edges: each cell keeps the larger of its
// value and the Gaussian's. A centre outside the map draws nothing.
void draw_heatmap_gaussian(at::Tensor& heatmap, int64_t x, int64_t y, int64_t radius);

}  // namespace ddp3d::models
