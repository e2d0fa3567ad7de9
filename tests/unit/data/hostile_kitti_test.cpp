// Malformed KITTI inputs: NaN/Inf/huge numbers in labels, calibration, points and the GT
// index are rejected with path:line (or point index); files that are FIFOs, directories,
// devices or huge sparse files are refused without blocking; voxel grids and max_voxels that
// would overflow an index or allocate without bound fail with a clear error.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tests/unit/common/hostile_files.h"
#include "worker/data/gt_database.h"
#include "worker/data/kitti_calib.h"
#include "worker/data/kitti_dataset.h"
#include "worker/data/kitti_label.h"
#include "worker/data/point_cloud_file.h"
#include "worker/data/voxelization.h"

namespace ddp3d::data {
namespace {

using ddp3d::testing::message_within;
using ddp3d::testing::ScratchDir;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A valid label line with field `index` (0-based) replaced by `value`.
std::string label_with(std::size_t index, const std::string& value) {
  std::vector<std::string> f{"Car", "0.00", "0",   "-1.5", "100", "150", "200", "250",
                             "1.5", "1.6",  "3.9", "2.0",  "1.5", "20",  "0.1"};
  f[index] = value;
  std::string line;
  for (const auto& x : f) line += x + " ";
  return "DontCare -1 -1 -10 0 0 10 10 -1 -1 -1 -1000 -1000 -1000 -10\n" + line + "\n";
}

TEST(HostileKittiLabels, NonFiniteOrAbsurdNumbersNamePathLineAndField) {
  const struct {
    std::size_t field;
    const char* value;
    const char* expect;
  } cases[] = {
      {13, "nan", "l.txt:2: location (field 14): 'nan' is not a number"},
      {10, "inf", "l.txt:2: dimensions (field 11): 'inf' is not a number"},
      {8, "-1e308", "l.txt:2: dimensions (field 9): '-1e308' is not a number"},
      {11, "1e400", "l.txt:2: location (field 12): '1e400' is not a number"},
      {2, "1e300", "l.txt:2: occluded (field 3): '1e300' is not a number"},
      {2, "1.5", "l.txt:2: occluded (field 3): '1.5' is not an integer"},
      {1, "NaN", "l.txt:2: truncated (field 2): 'NaN' is not a number"},
      {14, "0x1p3", "l.txt:2: rotation_y (field 15): '0x1p3' is not a number"},
      {4, "12px", "l.txt:2: bbox (field 5): '12px' is not a number"},
  };
  for (const auto& c : cases) {
    const std::string m =
        error_of([&] { parse_kitti_labels(label_with(c.field, c.value), "l.txt"); });
    EXPECT_TRUE(contains(m, c.expect)) << c.value << " -> " << m;
  }
  // KITTI's DontCare conventions (-1, -10, -1000) are real data, not garbage.
  EXPECT_EQ(parse_kitti_labels(label_with(1, "0.5"), "l.txt").size(), 2u);
}

TEST(HostileKittiCalib, NonFiniteValuesAndRunawayRowsNamePathAndLine) {
  std::string calib = format_kitti_calib(typical_kitti_calib());
  const std::string bad = "R0_rect: 1 0 0 0 nan 0 0 0 1\n" + calib;
  EXPECT_TRUE(contains(error_of([&] { parse_kitti_calib(bad, "c.txt"); }),
                       "c.txt:1: R0_rect: 'nan' is not a number"));
  const std::string huge = "P2: 1e300 0 0 0 0 1 0 0 0 0 1 0\n";
  EXPECT_TRUE(contains(error_of([&] { parse_kitti_calib(huge, "c.txt"); }),
                       "c.txt:1: P2: '1e300' is not a number"));
  std::string row = "P2:";
  for (int i = 0; i < 100000; ++i) row += " 1";
  EXPECT_TRUE(contains(error_of([&] { parse_kitti_calib(row + "\n", "c.txt"); }),
                       "c.txt:1: P2: more than 16 numbers"));
}

std::string floats(std::initializer_list<float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

TEST(HostileVelodyne, NonFiniteAndFarPointsAreRejectedNamingThePoint) {
  ScratchDir dir;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto ok = dir.write("ok.bin", floats({1, 2, 3, 0.5F, 4, 5, 6, 0.1F}));
  EXPECT_EQ(read_velodyne(ok.string()).size(0), 2);
  const auto with_nan = dir.write("nan.bin", floats({1, 2, 3, 0.5F, 4, nan, 6, 0.1F}));
  const std::string m = error_of([&] { read_velodyne(with_nan.string()); });
  EXPECT_TRUE(contains(m, "nan.bin: point 1 (byte 20): y = nan")) << m;
  const auto far = dir.write("far.bin", floats({1e30F, 2, 3, 0.5F}));
  EXPECT_TRUE(contains(error_of([&] { read_velodyne(far.string()); }), "point 0 (byte 0): x ="));
  const auto bad_r = dir.write("r.bin", floats({1, 2, 3, inf}));
  EXPECT_TRUE(contains(error_of([&] { read_velodyne(bad_r.string()); }),
                       "reflectance = inf is not finite"));
}

TEST(HostileKittiFiles, FifosDirectoriesDevicesAndSparseFilesAreRefused) {
  ScratchDir dir;
  const auto fifo = dir.fifo("training/velodyne/000000.bin");
  const std::string m = message_within([&] { read_velodyne(fifo.string()); }, fifo);
  EXPECT_TRUE(contains(m, "000000.bin: velodyne scan is a FIFO, not a regular file")) << m;
  EXPECT_TRUE(contains(error_of([] { read_kitti_labels("/dev/zero"); }),
                       "/dev/zero: KITTI label file is a character device"));
  EXPECT_TRUE(contains(error_of([&] { read_kitti_calib(dir.root().string()); }),
                       "KITTI calibration file is a directory"));
  const auto sparse = dir.sparse("huge.bin", std::uint64_t{1} << 40);  // 1 TiB of holes
  EXPECT_TRUE(contains(error_of([&] { read_velodyne(sparse.string()); }),
                       "velodyne scan is 1099511627776 bytes, over the limit"));
  const auto gt_fifo = dir.fifo("kitti_dbinfos_train.tsv");
  EXPECT_TRUE(contains(message_within([&] { read_gt_database(gt_fifo.string()); }, gt_fifo),
                       "GT database index is a FIFO"));
}

TEST(HostileKittiFiles, SplitListsHoldOnlyPlainFrameIds) {
  ScratchDir dir;
  dir.write("ImageSets/train.txt", "000000\n../../etc/passwd\n");
  const std::string m = error_of([&] { KittiDataset(dir.root().string(), "train", {"Car"}); });
  EXPECT_TRUE(contains(m, "train.txt:2: '../../etc/passwd' is not a frame id")) << m;
}

TEST(HostileGtDatabase, NonFiniteBoxesAndEscapingPathsNameTheLine) {
  ScratchDir dir;
  const std::string header = "# type\tpath\tx\ty\tz\tl\tw\th\tyaw\tnum_points\tdifficulty\n";
  const std::string good = "Car\tdb/a.bin\t1\t2\t-1\t3.9\t1.6\t1.5\t0.1\t40\t0\n";
  EXPECT_EQ(read_gt_database(dir.write("ok.tsv", header + good).string()).size(), 1u);
  const auto nan = dir.write(
      "nan.tsv", header + good + "Car\tdb/b.bin\tnan\t2\t-1\t3.9\t1.6\t1.5\t0.1\t40\t0\n");
  EXPECT_TRUE(contains(error_of([&] { read_gt_database(nan.string()); }),
                       "nan.tsv:3: field 3: 'nan' is not a finite number"));
  const auto escape =
      dir.write("esc.tsv", header + "Car\t../../x.bin\t1\t2\t-1\t3.9\t1.6\t1.5\t0.1\t40\t0\n");
  EXPECT_TRUE(contains(error_of([&] { read_gt_database(escape.string()); }),
                       "esc.tsv:2: path '../../x.bin' must be relative to the data root"));
  const auto count =
      dir.write("n.tsv", header + "Car\tdb/a.bin\t1\t2\t-1\t3.9\t1.6\t1.5\t0.1\t1e12\t0\n");
  EXPECT_TRUE(contains(error_of([&] { read_gt_database(count.string()); }), "n.tsv:2: field 10"));
}

TEST(HostileVoxelization, GridsThatWouldOverflowOrExhaustMemoryFail) {
  const at::Tensor points = at::zeros({4, 4});
  auto error = [&](const std::function<void(VoxelizationOptions&)>& change) {
    VoxelizationOptions o;
    change(o);
    return error_of([&] { voxelize(points, o); });
  };
  EXPECT_TRUE(contains(error([](auto& o) { o.voxel_size[0] = 0; }), "voxel_size > 0 (axis x)"));
  EXPECT_TRUE(contains(error([](auto& o) { o.voxel_size[1] = std::nan(""); }), "axis y"));
  EXPECT_TRUE(contains(error([](auto& o) { o.point_cloud_range[5] = 1e300; }),
                       "cells along z (range / voxel_size), more than 1048576"));
  EXPECT_TRUE(contains(error([](auto& o) {
                         o.voxel_size = {1e-3, 1e-3, 4};
                       }),
                       "cells is more than 67108864"));
  EXPECT_TRUE(contains(error([](auto& o) { o.max_voxels = std::numeric_limits<int>::max(); }),
                       "max_voxels 2147483647 is outside [1, 4194304]"));
  EXPECT_TRUE(contains(error([](auto& o) { o.max_voxels = -5; }), "max_voxels -5"));
  EXPECT_TRUE(contains(error([](auto& o) { o.max_points_per_voxel = 0; }), "max_num_points 0"));
  EXPECT_TRUE(contains(error([](auto& o) {
                         o.max_voxels = 4000000;
                         o.max_points_per_voxel = 4000;
                       }),
                       "bytes"));
}

}  // namespace
}  // namespace ddp3d::data
