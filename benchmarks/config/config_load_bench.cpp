// How long parsing (YAML text -> config tree, duplicate-key check included) and loading (the
// same plus the `_base_` merge) take for one flat mapping of N keys, N doubling from 10000 to
// 80000 (the loader's node limit is 100000). A linear loader keeps ns/key flat as N doubles; a
// quadratic one doubles it. benchmarks/config/run builds and runs it.
//
//   config_load_bench [--rounds R]
//   -> one line per N, then
//      RESULT config_load parse_ns_per_key_80k=<x> load_ns_per_key_80k=<y> growth_10k_to_80k=<r>
//   growth_10k_to_80k: load ns/key at 80000 keys over ns/key at 10000 (~1 linear, ~8 quadratic).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "worker/config/loader.h"
#include "worker/config/yaml_io.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string flat_mapping(int keys) {
  std::string text;
  text.reserve(static_cast<std::size_t>(keys) * 16);
  for (int i = 0; i < keys; ++i)
    text += "key_" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  return text;
}

// The best of `rounds` timings: the least disturbed by other load on the machine.
double best_seconds(int rounds, const std::function<void()>& fn) {
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) {
    const auto start = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 3;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  double parse_first = 0, load_first = 0, parse_last = 0, load_last = 0;
  for (const int keys : {10000, 20000, 40000, 80000}) {
    const std::string text = flat_mapping(keys);
    std::size_t loaded = 0;
    const double parse = best_seconds(
        rounds, [&] { loaded = ddp3d::config::parse_yaml(text, "bench.yaml").entries().size(); });
    const double load = best_seconds(rounds, [&] {
      loaded = ddp3d::config::load_tree_from_text(text, "bench.yaml", std::filesystem::path("."))
                   .entries()
                   .size();
    });
    if (loaded != static_cast<std::size_t>(keys)) {
      std::fprintf(stderr, "loaded %zu keys of %d\n", loaded, keys);
      return 1;
    }
    const double parse_ns = parse * 1e9 / keys, load_ns = load * 1e9 / keys;
    if (keys == 10000) parse_first = parse_ns, load_first = load_ns;
    parse_last = parse_ns, load_last = load_ns;
    std::printf(
        "keys=%d parse_ms=%.1f load_ms=%.1f parse_ns_per_key=%.0f load_ns_per_key=%.0f "
        "load_ns_per_key_vs_10k=%.2f\n",
        keys, parse * 1e3, load * 1e3, parse_ns, load_ns, load_ns / load_first);
  }
  std::printf(
      "RESULT config_load parse_ns_per_key_80k=%.0f load_ns_per_key_80k=%.0f "
      "growth_10k_to_80k=%.2f parse_growth_10k_to_80k=%.2f\n",
      parse_last, load_last, load_last / load_first, parse_last / parse_first);
  return 0;
}
