// The config keys of PointPillars and its parts, each declared once (config::FieldTable): the
// schemas they register, the reading of a config into PointPillarsOptions and the options as a
// tree (the benchmark's spec) all come from these tables. Names and defaults are mmdet3d's.
#pragma once

#include "worker/config/component_schemas.h"
#include "worker/config/field_table.h"
#include "worker/models/pointpillars/options.h"

namespace ddp3d::models {

// model (type: PointPillars): data_preprocessor, the five parts, train_cfg, test_cfg.
const config::FieldTable<PointPillarsOptions>& pointpillars_fields();
// model.backbone (type: SECOND).
const config::FieldTable<SECONDOptions>& second_fields();
// model.middle_encoder (type: PointPillarsScatter).
const config::FieldTable<PointPillarsScatterOptions>& scatter_fields();
// model.neck (type: SECONDFPN).
const config::FieldTable<SECONDFPNOptions>& second_fpn_fields();

// Registers the schemas (and cross-key checks) of PointPillars and of its parts: model
// PointPillars, voxel_encoder PillarFeatureNet, middle_encoder PointPillarsScatter, backbone
// SECOND, neck SECONDFPN, bbox_head Anchor3DHead.
void register_pointpillars_schemas(config::ComponentSchemas& schemas);

}  // namespace ddp3d::models
