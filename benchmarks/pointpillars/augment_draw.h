// Which frames a rank reads and which augmentation it applies at a given iteration, as pure
// functions of (seed, iteration, rank, slot): torch_pointpillars_bench.py computes the same
// numbers (the same splitmix64 arithmetic), so both sides voxelize identical point clouds and
// train on identical work, and the comparison measures the implementations, not the dice.
#pragma once

#include <cstddef>
#include <cstdint>

#include "benchmarks/pointpillars/bench_spec.h"

namespace ddp3d::bench {

// splitmix64's output function of x + golden gamma.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A double in [0, 1) from the top 53 bits.
constexpr double unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

struct DrawKey {
  std::uint64_t seed = 0;
};

// Frame of batch slot j: consecutive ranks and iterations walk the split in order (a
// DistributedSampler without shuffling), wrapping around.
inline std::size_t sample_index(int iteration, int rank, int world, int batch, int j,
                                std::size_t dataset_size) {
  const auto flat = (static_cast<std::uint64_t>(iteration) * static_cast<std::uint64_t>(world) +
                     static_cast<std::uint64_t>(rank)) *
                        static_cast<std::uint64_t>(batch) +
                    static_cast<std::uint64_t>(j);
  return static_cast<std::size_t>(flat % dataset_size);
}

struct AugmentDraw {
  bool flip = false;
  double angle = 0.0;
  double scale = 1.0;
  std::uint64_t shuffle_seed = 0;
};

inline AugmentDraw draw_augment(const DrawKey& key, int iteration, int rank, int j,
                                const AugmentSpec& a) {
  const std::uint64_t state =
      splitmix64(splitmix64(splitmix64(key.seed) ^ static_cast<std::uint64_t>(iteration)) ^
                 (static_cast<std::uint64_t>(rank) * 4096 + static_cast<std::uint64_t>(j)));
  AugmentDraw d;
  d.flip = unit(splitmix64(state + 1)) < a.flip_ratio;
  d.angle = a.rot_range[0] + (a.rot_range[1] - a.rot_range[0]) * unit(splitmix64(state + 2));
  d.scale = a.scale_range[0] + (a.scale_range[1] - a.scale_range[0]) * unit(splitmix64(state + 3));
  d.shuffle_seed = splitmix64(state + 4);
  return d;
}

}  // namespace ddp3d::bench
