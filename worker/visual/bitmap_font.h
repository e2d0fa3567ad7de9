// A 5 x 7 pixel bitmap font for picture labels (frame ids, class names, scores, the scale
// bar): digits, capitals (lower case is drawn as capitals) and " .->=:"; anything else is '?'.
#pragma once

#include <array>
#include <cstdint>

namespace ddp3d::visual {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;
inline constexpr int kGlyphAdvance = 6;  // one column of space between glyphs

// Seven rows, top first; bit 4 of a row is its leftmost pixel.
std::array<std::uint8_t, kGlyphHeight> glyph(char c);

}  // namespace ddp3d::visual
