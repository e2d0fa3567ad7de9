#include "worker/cli/browse_command.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/parse_number.h"
#include "worker/cli/output_dir.h"
#include "worker/config/config.h"
#include "worker/detection/browse_dataset.h"
#include "worker/detection/detection_pictures.h"
#include "worker/engine/registry.h"

namespace ddp3d::cli {
namespace {

constexpr const char* kUsage =
    "usage: ddp3d data browse CONFIG --out DIR [--count N] [--augmented] [--seed S]\n"
    "                         [--cfg-options k=v ...]\n"
    "  writes DIR/<frame id>.png for the first N (default 20) frames of train_dataloader:\n"
    "  points, and the boxes training sees; --augmented runs the whole train pipeline (GT\n"
    "  sampling, flips, rotation, scaling), otherwise its random transforms are left out\n";

struct BrowseArgs {
  std::string config;
  std::filesystem::path out;
  std::int64_t count = 20;
  bool augmented = false;
  std::uint64_t seed = 0;
  std::vector<std::string> cfg_options;
};

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

BrowseArgs parse(int argc, char** argv) {
  BrowseArgs a;
  const std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(w + " needs a value");
      return args[++i];
    };
    if (w == "--out") {
      a.out = value();
      if (a.out.empty()) throw UsageError("--out: empty path");
    } else if (w == "--count") {
      a.count = parse_integer(w, value(), 1, std::numeric_limits<std::int64_t>::max());
    } else if (w == "--seed") {
      a.seed = parse_unsigned(w, value(), 0, std::numeric_limits<std::uint64_t>::max());
    } else if (w == "--augmented") {
      a.augmented = true;
    } else if (w == "--cfg-options") {
      while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
        const std::string& kv = args[++i];
        if (kv.find('=') == std::string::npos || kv.front() == '=')
          throw UsageError("--cfg-options: expected key=value, got '" + kv + "'");
        a.cfg_options.push_back(kv);
      }
    } else if (w.rfind("--", 0) == 0) {
      throw UsageError("unknown flag " + w);
    } else if (a.config.empty()) {
      a.config = w;
    } else {
      throw UsageError("unexpected argument '" + w + "'");
    }
  }
  if (a.config.empty()) throw UsageError("which config?");
  if (a.out.empty()) throw UsageError("--out DIR is required");
  return a;
}

// The detection range drawn: the evaluator's (as `ddp3d test --show-dir` draws it), else
// KITTI's front view.
std::array<double, 6> drawn_range(const config::Config& cfg) {
  std::array<double, 6> range{0, -40, -3, 70.4, 40, 1};
  if (!cfg.has("val_evaluator.pcd_limit_range")) return range;
  const auto values = cfg.get<std::vector<double>>("val_evaluator.pcd_limit_range");
  if (values.size() != 6) {
    throw config::ConfigError(cfg.origin("val_evaluator.pcd_limit_range"),
                              "val_evaluator.pcd_limit_range", "expected 6 numbers");
  }
  std::copy(values.begin(), values.end(), range.begin());
  return range;
}

std::vector<std::string> split_classes(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string c; std::getline(ss, c, ',');) out.push_back(c);
  return out;
}

}  // namespace

int run_browse(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  BrowseArgs args;
  try {
    args = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "ddp3d data browse: " << e.what() << "\n" << kUsage;
    return 2;
  }
  std::shared_ptr<const engine::Dataset> dataset;
  std::array<double, 6> range{};
  try {
    const config::Config cfg = config::load(args.config, args.cfg_options);
    if (!cfg.has("train_dataloader.dataset")) {
      throw config::ConfigError(cfg.file().string(), "train_dataloader.dataset",
                                "`ddp3d data browse` draws the training data: none configured");
    }
    range = drawn_range(cfg);
    prepare_output_dir("--out", args.out);
    dataset = detection::browsable_dataset(
        engine::dataset_registry().build(cfg.node("train_dataloader.dataset")), args.augmented);
  } catch (const config::ConfigError& e) {
    log::error(std::string("config error:\n") + e.what());
    return 2;
  } catch (const std::exception& e) {
    log::error(std::string("data browse: ") + e.what());
    return 1;
  }
  const std::int64_t n = std::min(args.count, dataset->size());
  const std::string view = args.augmented ? "the train pipeline, augmented"
                                          : "the train pipeline without its random transforms";
  log::info("data browse: " + std::to_string(n) + " of " + std::to_string(dataset->size()) +
            " frames through " + view + " to " + args.out.string());
  try {
    at::Generator rng = at::make_generator<at::CPUGeneratorImpl>(args.seed);
    std::int64_t boxes = 0;
    const std::int64_t step = std::max<std::int64_t>(n / 10, 1);
    for (std::int64_t i = 0; i < n; ++i) {
      const engine::Sample sample = dataset->get(i, rng);
      const std::string& id = sample.meta.at("frame_id");
      boxes += detection::write_training_sample_picture(
          sample, args.out / (id + ".png"), range, split_classes(sample.meta.at("classes")),
          id + (args.augmented ? "  augmented" : "  as loaded"));
      if ((i + 1) % step == 0 || i + 1 == n)
        log::info("data browse: " + std::to_string(i + 1) + "/" + std::to_string(n));
    }
    log::info("data browse: wrote " + std::to_string(n) + " pictures with " +
              std::to_string(boxes) + " boxes to " + args.out.string());
    return 0;
  } catch (const std::exception& e) {
    log::error(std::string("data browse: ") + e.what());
    return 1;
  }
}

}  // namespace ddp3d::cli
