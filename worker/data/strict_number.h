// Numbers in KITTI text files (labels, calibration, the GT database index), parsed strictly:
// the whole token, finite, within a plausible range. std::stod would take "nan", "inf", hex
// and trailing garbage; a NaN in a label then trains the model on NaN.
#pragma once

#include <optional>
#include <string_view>

namespace ddp3d::data {

// The token as a finite double in [min, max], or nullopt ("1e999", "nan", "1.5x", "").
std::optional<double> parse_bounded_number(std::string_view token, double min, double max);

}  // namespace ddp3d::data
