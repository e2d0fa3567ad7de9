#include "worker/visual/bev_render.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "worker/visual/bitmap_font.h"

namespace ddp3d::visual {
namespace {

// 20 m ahead and 10 m to each side at 10 px/m, no margin: 200 x 200 pixels.
BevView small_view() {
  return BevView::around({0, -10, -3, 20, 10, 1}, 0, 10);
}

Rgb at(const RgbImage& image, double x, double y, const BevView& view) {
  const auto p = view.to_pixel(x, y);
  return image.at(static_cast<int>(std::lround(p[0])), static_cast<int>(std::lround(p[1])));
}

TEST(BevView, AxesAndSizeFollowTheLidarFrame) {
  const BevView v = small_view();
  EXPECT_EQ(v.width(), 200);
  EXPECT_EQ(v.height(), 200);
  // Forward (+x) is up, left (+y) is left.
  EXPECT_DOUBLE_EQ(v.to_pixel(20, 10)[0], 0);
  EXPECT_DOUBLE_EQ(v.to_pixel(20, 10)[1], 0);
  EXPECT_DOUBLE_EQ(v.to_pixel(0, -10)[0], 200);
  EXPECT_DOUBLE_EQ(v.to_pixel(0, -10)[1], 200);
  EXPECT_DOUBLE_EQ(v.to_pixel(15, 0)[0], 100);
  EXPECT_DOUBLE_EQ(v.to_pixel(15, 0)[1], 50);
  const BevView m = BevView::around({0, -10, -3, 20, 10, 1}, 2, 5);
  EXPECT_EQ(m.width(), 120);
  EXPECT_DOUBLE_EQ(m.x_max, 22);
}

TEST(BevView, RangesThatCannotBeDrawnAreRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(BevView::around({0, -10, -3, 0, 10, 1}, 0, 10), std::invalid_argument);
  EXPECT_THROW(BevView::around({0, nan, -3, 20, 10, 1}, 0, 10), std::invalid_argument);
  EXPECT_THROW(BevView::around({0, -1e9, -3, 20, 1e9, 1}, 0, 10), std::invalid_argument);
  EXPECT_THROW(BevView::around({0, -10, -3, 20, 10, 1}, 0, 0), std::invalid_argument);
  EXPECT_THROW(BevView::around({0, -500, -3, 999, 500, 1}, 0, 100), std::invalid_argument);
}

TEST(RenderBev, AGroundTruthBoxIsDrawnWhereItIs) {
  const BevView view = small_view();
  BevScene scene;
  scene.detection_range = {0, -10, -3, 20, 10, 1};
  // A car 4 m long and 2 m wide at (12, 3), heading along +x.
  scene.ground_truth.push_back({12, 3, 4, 2, 0, 0});
  const RgbImage image = render_bev(scene, view, BevStyle{});
  // Its edges: front x = 14, rear x = 10, left y = 4, right y = 2.
  EXPECT_EQ(at(image, 14, 3.5, view), kGroundTruthColour);
  EXPECT_EQ(at(image, 10, 2.5, view), kGroundTruthColour);
  EXPECT_EQ(at(image, 11, 4, view), kGroundTruthColour);
  EXPECT_EQ(at(image, 13, 2, view), kGroundTruthColour);
  // The heading runs from the centre to the front.
  EXPECT_EQ(at(image, 13, 3, view), kGroundTruthColour);
  EXPECT_EQ(at(image, 11, 3, view), kBackground);
  // Elsewhere, nothing.
  EXPECT_EQ(at(image, 5, -5, view), kBackground);
}

TEST(RenderBev, YawTurnsTheBoxAndItsHeading) {
  const BevView view = small_view();
  BevScene scene;
  scene.ground_truth.push_back({12, 0, 4, 2, std::numbers::pi / 2, 0});  // heading along +y
  const RgbImage image = render_bev(scene, view, BevStyle{});
  EXPECT_EQ(at(image, 12, 1.5, view), kGroundTruthColour);  // heading towards +y
  EXPECT_EQ(at(image, 12, -1.5, view), kBackground);        // not towards -y
  EXPECT_EQ(at(image, 12.5, 2, view), kGroundTruthColour);  // the front edge at y = 2
  EXPECT_EQ(at(image, 13, 0.5, view), kGroundTruthColour);  // a side at x = 13
}

TEST(RenderBev, PredictionsBelowTheThresholdOrNotFiniteAreLeftOut) {
  const BevView view = small_view();
  BevScene scene;
  scene.class_names = {"Car", "Pedestrian"};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  scene.predictions = {{15, -5, 4, 2, 0, 0, 0.9},
                       {5, -5, 4, 2, 0, 1, 0.05},
                       {5, 5, 4, 2, 0, 0, nan},
                       {nan, 0, 4, 2, 0, 0, 0.9},
                       {8, 0, 4, 2, 0, 1, 0.5}};
  BevCounts counts;
  const RgbImage image = render_bev(scene, view, BevStyle{}, &counts);
  EXPECT_EQ(counts.predictions, 2);
  EXPECT_EQ(counts.not_finite, 2);
  EXPECT_EQ(at(image, 17, -5.5, view), prediction_colour(0));  // front edge of the 0.9 car
  EXPECT_EQ(at(image, 10, 0.5, view), prediction_colour(1));   // the pedestrian class's colour
  EXPECT_EQ(at(image, 7, -5.5, view), kBackground);            // 0.05 < 0.1: not drawn
  EXPECT_NE(prediction_colour(0), prediction_colour(1));
}

TEST(RenderBev, PointsAreColouredByHeightOrIntensity) {
  const BevView view = small_view();
  BevScene scene;
  scene.points = {{5, 5, -3, 1.0F}, {5, -5, 1, 0.0F}, {100, 0, 0, 0}, {std::nanf(""), 0, 0, 0}};
  BevCounts counts;
  BevStyle style;
  const RgbImage by_height = render_bev(scene, view, style, &counts);
  EXPECT_EQ(counts.points, 2);  // the one 100 m ahead is outside the picture
  EXPECT_EQ(counts.not_finite, 1);
  EXPECT_EQ(at(by_height, 5, 5, view), point_colour(scene.points[0], style));
  EXPECT_EQ(at(by_height, 5, -5, view), point_colour(scene.points[1], style));
  EXPECT_NE(at(by_height, 5, 5, view), at(by_height, 5, -5, view));
  style.colour = PointColour::kIntensity;
  const RgbImage by_intensity = render_bev(scene, view, style);
  // The low point is bright, the high one dim: the colours swap ends.
  EXPECT_EQ(at(by_intensity, 5, 5, view), at(by_height, 5, -5, view));
}

TEST(RenderBev, TheDetectionRangeAndAScaleBarAreDrawn) {
  const BevView view = BevView::around({0, -10, -3, 20, 10, 1}, 2, 10);
  BevScene scene;
  scene.detection_range = {0, -10, -3, 20, 10, 1};
  const RgbImage image = render_bev(scene, view, BevStyle{});
  EXPECT_EQ(at(image, 20, 0, view), kRangeColour);    // the far side
  EXPECT_EQ(at(image, 10, -10, view), kRangeColour);  // the right side
  EXPECT_EQ(at(image, 21, 0, view), kBackground);     // in the margin
  // The 10 m bar, 10 px above the bottom, from column 10 to 110 (2 px thick).
  EXPECT_EQ(image.at(60, image.height - 10), kScaleColour);
  EXPECT_EQ(image.at(109, image.height - 10), kScaleColour);
  EXPECT_EQ(image.at(130, image.height - 10), kBackground);
}

TEST(RenderBev, TheTitleIsWrittenInTheBitmapFont) {
  const BevView view = small_view();
  BevScene scene;
  scene.title = "a7";  // lower case is drawn as capitals
  const RgbImage image = render_bev(scene, view, BevStyle{});
  // The title's baseline-left corner is (8, 14): glyph rows 7..13, one column between glyphs.
  for (int g = 0; g < 2; ++g) {
    const auto rows = glyph("A7"[g]);
    for (int r = 0; r < kGlyphHeight; ++r) {
      for (int k = 0; k < kGlyphWidth; ++k) {
        const bool on = (rows[static_cast<std::size_t>(r)] >> (kGlyphWidth - 1 - k)) & 1;
        EXPECT_EQ(image.at(8 + g * kGlyphAdvance + k, 14 - kGlyphHeight + r),
                  on ? kScaleColour : kBackground)
            << "glyph " << g << " row " << r << " column " << k;
      }
    }
  }
  EXPECT_EQ(glyph('a'), glyph('A'));
  EXPECT_EQ(glyph('~'), glyph('?'));
  EXPECT_NE(glyph('0'), glyph('O'));
}

TEST(RenderBev, HostileScenesGiveAPictureNotACrash) {
  const BevView view = small_view();
  BevScene scene;  // no points at all
  const double inf = std::numeric_limits<double>::infinity();
  scene.ground_truth = {
      {1e12, -1e12, 4, 2, 0, 0}, {10, 0, 1e30, 1e30, 0, 0}, {10, 0, 4, 2, inf, 0}};
  scene.predictions = {{10, 0, 4, 2, 0, -7, 0.9}, {10, 0, 4, 2, 0, 1000, 0.9}};  // unknown classes
  BevCounts counts;
  const RgbImage image = render_bev(scene, view, BevStyle{}, &counts);
  EXPECT_EQ(image.width, 200);
  EXPECT_EQ(counts.points, 0);
  EXPECT_EQ(counts.not_finite, 1);
  EXPECT_EQ(counts.predictions, 2);
}

}  // namespace
}  // namespace ddp3d::visual
