#include "worker/cli/data_command.h"

#include <chrono>
#include <cstdint>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/parse_number.h"
#include "worker/cli/browse_command.h"
#include "worker/data/gt_database.h"
#include "worker/data/synthetic_kitti.h"

namespace ddp3d::cli {
namespace {

constexpr const char* kUsage =
    "usage: ddp3d data synth-kitti OUT [--scenes N] [--seed S] [--val-fraction F]\n"
    "                               [--azimuth-step DEG] [--beams N]\n"
    "  writes OUT/training/{velodyne,label_2,calib} and OUT/ImageSets/{train,val,trainval}.txt\n"
    "usage: ddp3d data create-gt-db DATA_ROOT [--split train] [--classes Car,Pedestrian,Cyclist]\n"
    "  writes DATA_ROOT/kitti_gt_database/*.bin and DATA_ROOT/kitti_dbinfos_<split>.tsv, the\n"
    "  objects ObjectSample pastes\n"
    "usage: ddp3d data browse CONFIG --out DIR [--count N] [--augmented] [--seed S]\n"
    "  pictures of the training data as the train pipeline makes it (ddp3d data browse --help)\n";

int run_create_gt_db(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string root = argv[2];
  std::string split = "train";
  std::vector<std::string> classes{"Car", "Pedestrian", "Cyclist"};
  for (int i = 3; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "ddp3d data: " << a << " needs a value\n" << kUsage;
      return 2;
    }
    if (a == "--split") {
      split = argv[i + 1];
    } else if (a == "--classes") {
      classes.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string c; std::getline(list, c, ',');) classes.push_back(c);
    } else {
      std::cerr << "ddp3d data: unknown flag " << a << "\n" << kUsage;
      return 2;
    }
  }
  try {
    const auto entries = data::create_gt_database(root, split, classes);
    log::info("create-gt-db: wrote " + std::to_string(entries.size()) + " objects to " + root +
              "/kitti_gt_database and the index " + root + "/kitti_dbinfos_" + split + ".tsv");
    return 0;
  } catch (const std::exception& e) {
    log::error(std::string("create-gt-db: ") + e.what());
    return 1;
  }
}

}  // namespace

int run_data(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "create-gt-db") return run_create_gt_db(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "browse") return run_browse(argc - 2, argv + 2);
  if (argc < 3 || std::string(argv[1]) != "synth-kitti") {
    std::cerr << kUsage;
    return 2;
  }
  data::SynthKittiOptions options;
  const std::string out = argv[2];
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "ddp3d data: " << a << " needs a value\n" << kUsage;
      return 2;
    }
    const std::string v = argv[++i];
    try {
      if (a == "--scenes") {
        options.scenes = static_cast<int>(parse_integer(a, v, 1, data::kMaxSyntheticScenes));
      } else if (a == "--seed") {
        options.seed = parse_unsigned(a, v, 0, std::numeric_limits<std::uint64_t>::max());
      } else if (a == "--val-fraction") {
        options.val_fraction = parse_real(a, v, 0, 1);
        if (options.val_fraction >= 1) throw std::invalid_argument(a + ": must be below 1");
      } else if (a == "--azimuth-step") {
        options.scene.azimuth_step_deg =
            parse_real(a, v, data::kMinAzimuthStepDeg, data::kMaxAzimuthStepDeg);
      } else if (a == "--beams") {
        options.scene.beams = static_cast<int>(parse_integer(a, v, 1, data::kMaxSyntheticBeams));
      } else {
        std::cerr << "ddp3d data: unknown flag " << a << "\n" << kUsage;
        return 2;
      }
    } catch (const std::invalid_argument& e) {
      std::cerr << "ddp3d data: " << e.what() << "\n";
      return 2;
    }
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    const int step = std::max(options.scenes / 10, 1);
    const auto stats = data::write_synthetic_kitti(out, options, [&](int done) {
      if (done % step == 0 || done == options.scenes) {
        log::info("synth-kitti: " + std::to_string(done) + "/" + std::to_string(options.scenes) +
                  " scenes");
      }
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    log::info("wrote " + std::to_string(stats.scenes) + " scenes to " + out + " in " +
              std::to_string(seconds) + " s: " + std::to_string(stats.points) + " points, " +
              std::to_string(stats.cars) + " cars, " + std::to_string(stats.pedestrians) +
              " pedestrians, " + std::to_string(stats.cyclists) + " cyclists");
    return 0;
  } catch (const std::exception& e) {
    log::error(std::string("synth-kitti: ") + e.what());
    return 1;
  }
}

}  // namespace ddp3d::cli
