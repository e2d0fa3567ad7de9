#include "worker/config/common_schemas.h"

namespace ddp3d::config::schemas {

Schema range6() {
  return vec(6);
}
Schema vec(std::size_t n) {
  return Schema::list(Schema::number()).length(n);
}
Schema int_list() {
  return Schema::list(Schema::integer().min(1)).min_length(1);
}
Schema str_list() {
  return Schema::list(Schema::string());
}
Schema prob() {
  return Schema::number().min(0).max(1);
}

}  // namespace ddp3d::config::schemas
