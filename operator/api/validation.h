// Semantic validation of a parsed TrainingJob. The CRD's schema and CEL rules reject most of
// this at admission; the operator checks again because a CRD installed without them (or an
// older one) must not make it create broken pods.
#pragma once

#include <vector>

#include "operator/api/field_error.h"
#include "operator/api/training_job.h"

namespace ddp3d::op::api {

inline constexpr int kMaxNodes = 1024;
inline constexpr int kMaxGpusPerNode = 64;

std::vector<FieldError> validate(const TrainingJob& job);

}  // namespace ddp3d::op::api
