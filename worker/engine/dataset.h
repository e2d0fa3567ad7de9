// The dataset interface: random access to samples plus the collate rule for its fields.
// Implementations must be safe to call `get` from several loader threads at once
// (`get` is const; keep per-call randomness in the passed generator).
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "worker/engine/sample.h"

namespace ddp3d::engine {

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::int64_t size() const = 0;
  // Sample `index` (0 <= index < size()). Data augmentation draws from `rng` only: the loader
  // seeds it from (seed, rank, epoch, index), so a run is reproducible and resumable whatever the
  // thread schedule. `rng` is a CPU at::Generator.
  virtual Sample get(std::int64_t index, at::Generator& rng) const = 0;
  // Fields that vary in shape between samples and must be collated into per-sample lists.
  virtual std::set<std::string> list_fields() const { return {}; }
  // Builds a batch from samples; the default stacks every field except list_fields().
  virtual Batch collate(const std::vector<Sample>& samples) const {
    return collate_samples(samples, list_fields());
  }
};

}  // namespace ddp3d::engine
