#include "worker/models/pointpillars/config.h"
#include "worker/models/voxel_encoders/pillar_feature_net.h"
#include "worker/models/voxel_encoders/voxel_encoder.h"

namespace ddp3d::models {

config::Registry<VoxelEncoderImpl>& voxel_encoder_registry() {
  static config::Registry<VoxelEncoderImpl> registry = [] {
    config::Registry<VoxelEncoderImpl> r("voxel_encoder");
    r.add("PillarFeatureNet", [](const config::Config& model) -> VoxelEncoderPtr {
      return std::make_shared<PillarFeatureNetImpl>(
          pointpillars_options_from_config(model).voxel_encoder);
    });
    return r;
  }();
  return registry;
}

}  // namespace ddp3d::models
