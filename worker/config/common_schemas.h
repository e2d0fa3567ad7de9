// Small value schemas that configs of several components share (mmdet3d's recurring shapes).
#pragma once

#include <cstddef>

#include "worker/config/schema.h"

namespace ddp3d::config::schemas {

Schema range6();            // [x_min, y_min, z_min, x_max, y_max, z_max]
Schema vec(std::size_t n);  // n numbers
Schema int_list();          // one or more integers >= 1 (channels, strides)
Schema str_list();          // strings (class names, keys)
Schema prob();              // a number in [0, 1]

}  // namespace ddp3d::config::schemas
