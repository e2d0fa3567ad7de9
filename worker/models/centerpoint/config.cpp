#include "worker/models/centerpoint/config.h"

#include <vector>

#include "worker/models/centerpoint/fields.h"

namespace ddp3d::models {

CenterHeadConfig center_head_config(const config::Config& model) {
  CenterHeadConfig c;
  center_head_fields().read(model.node("bbox_head"), c.head);
  if (model.has("train_cfg"))
    centerpoint_train_cfg_fields().read(model.node("train_cfg"), c.train_cfg);
  if (model.has("test_cfg")) centerpoint_test_cfg_fields().read(model.node("test_cfg"), c.test_cfg);
  // The coder's geometry defaults to the grid the voxel layer makes (mmdet3d repeats it).
  CenterPointBBoxCoderOptions& coder = c.head.bbox_coder;
  const config::Config voxel_layer = model.node("data_preprocessor.voxel_layer");
  if (coder.pc_range.empty()) {
    const auto range = voxel_layer.get<std::vector<double>>("point_cloud_range");
    coder.pc_range = {range.at(0), range.at(1)};
  }
  if (coder.voxel_size.empty()) {
    const auto size = voxel_layer.get<std::vector<double>>("voxel_size");
    coder.voxel_size = {size.at(0), size.at(1)};
  }
  return c;
}

}  // namespace ddp3d::models
