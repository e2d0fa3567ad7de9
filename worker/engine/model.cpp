#include "worker/engine/model.h"

#include <stdexcept>

namespace ddp3d::engine {

at::Tensor total_loss(const LossMap& losses) {
  at::Tensor sum;
  for (const auto& [name, value] : losses) {
    if (name.find("loss") == std::string::npos) continue;
    if (value.dim() != 0) {
      throw std::invalid_argument("loss '" + name + "' must be a scalar, got " +
                                  std::to_string(value.dim()) + " dims");
    }
    sum = sum.defined() ? sum + value : value;
  }
  if (!sum.defined()) {
    throw std::invalid_argument("forward_train returned no entry whose name contains \"loss\"");
  }
  return sum;
}

}  // namespace ddp3d::engine
