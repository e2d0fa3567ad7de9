// The config keys of CenterPoint on pillars: model CenterPoint (PointPillars' data
// preprocessor, voxel encoder, middle encoder, backbone and neck, with a CenterHead and its own
// train_cfg and test_cfg) and bbox_head CenterHead, each declared once (config::FieldTable).
#pragma once

#include "worker/config/component_schemas.h"
#include "worker/config/field_table.h"
#include "worker/models/centerpoint/options.h"

namespace ddp3d::models {

// model.bbox_head (type: CenterHead).
const config::FieldTable<CenterHeadOptions>& center_head_fields();
// model.train_cfg and model.test_cfg of model CenterPoint.
const config::FieldTable<CenterPointTrainCfg>& centerpoint_train_cfg_fields();
const config::FieldTable<CenterPointTestCfg>& centerpoint_test_cfg_fields();

// Registers model CenterPoint and bbox_head CenterHead with their cross-key checks.
void register_centerpoint_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::models
