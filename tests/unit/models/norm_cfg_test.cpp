// norm_cfg.type in the PointPillars config: BN / BN1d / BN2d build torch's BatchNorm, SyncBN
// builds ddp3d's SyncBatchNorm in the voxel encoder, backbone and neck (with the same parameter
// and buffer names, and at world size 1 the same numbers); anything else is a config error
// naming the key.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/batchnorm.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "worker/config/config.h"
#include "worker/dist/sync_batch_norm.h"
#include "worker/models/pointpillars/config.h"
#include "worker/models/pointpillars/engine_model.h"

namespace ddp3d::models {
namespace {

std::filesystem::path demo_config() {
  return ::ddp3d::testing::source_path("configs/pointpillars/pointpillars_demo_synthetic_car.yaml");
}

const std::vector<std::string> kAllSyncBN{"model.voxel_encoder.norm_cfg.type=SyncBN",
                                          "model.backbone.norm_cfg.type=SyncBN",
                                          "model.neck.norm_cfg.type=SyncBN"};

std::shared_ptr<engine::Model> build(const std::vector<std::string>& options) {
  engine::Registry<engine::Model> registry("model");
  register_models(registry);
  return registry.build(config::load(demo_config(), options).node("model"));
}

struct NormCount {
  int batch_norm = 0;
  int sync_batch_norm = 0;
};

NormCount count_norms(const torch::nn::Module& model) {
  NormCount n;
  for (const auto& m : model.modules(/*include_self=*/false)) {
    if (m->as<torch::nn::BatchNorm1dImpl>() || m->as<torch::nn::BatchNorm2dImpl>()) {
      ++n.batch_norm;
    }
    if (m->as<dist::SyncBatchNormImpl>()) ++n.sync_batch_norm;
  }
  return n;
}

TEST(NormCfg, ParsesMmdet3dTypes) {
  EXPECT_EQ(parse_norm_type("BN"), NormType::kBatchNorm);
  EXPECT_EQ(parse_norm_type("BN1d"), NormType::kBatchNorm);
  EXPECT_EQ(parse_norm_type("BN2d"), NormType::kBatchNorm);
  EXPECT_EQ(parse_norm_type("SyncBN"), NormType::kSyncBatchNorm);
  EXPECT_THROW(parse_norm_type("GN"), std::invalid_argument);
  EXPECT_THROW(parse_norm_type("syncbn"), std::invalid_argument);
}

TEST(NormCfg, SyncBNConfigBuildsSyncBatchNormInEveryPart) {
  const PointPillarsOptions o =
      pointpillars_options_from_config(config::load(demo_config(), kAllSyncBN).node("model"));
  EXPECT_EQ(o.voxel_encoder.norm_cfg.type, NormType::kSyncBatchNorm);
  EXPECT_EQ(o.backbone.norm_cfg.type, NormType::kSyncBatchNorm);
  EXPECT_EQ(o.neck.norm_cfg.type, NormType::kSyncBatchNorm);
  EXPECT_EQ(o.backbone.norm_cfg.eps, 1e-3);
  EXPECT_EQ(o.backbone.norm_cfg.momentum, 0.01);

  const auto bn = build({});
  const auto sync = build(kAllSyncBN);
  const NormCount plain = count_norms(*bn);
  const NormCount synced = count_norms(*sync);
  // Demo: 1 PFN layer + (1+1)+(1+2)+(1+2) backbone convs + 3 deblocks.
  EXPECT_EQ(plain.batch_norm, 12);
  EXPECT_EQ(plain.sync_batch_norm, 0);
  EXPECT_EQ(synced.batch_norm, 0);
  EXPECT_EQ(synced.sync_batch_norm, 12);

  // Only the backbone: the other parts keep BatchNorm.
  const NormCount mixed = count_norms(*build({"model.backbone.norm_cfg.type=SyncBN"}));
  EXPECT_EQ(mixed.sync_batch_norm, 8);
  EXPECT_EQ(mixed.batch_norm, 4);
  // mmdet3d's explicit BN2d is BatchNorm2d.
  EXPECT_EQ(count_norms(*build({"model.neck.norm_cfg.type=BN2d"})).batch_norm, 12);
}

TEST(NormCfg, SyncBNModelHasTheSameStateNamesAndOneProcessNumbers) {
  const auto bn = build({});
  const auto sync = build(kAllSyncBN);
  // Checkpoints written with one load into the other.
  EXPECT_EQ(sync->named_parameters().keys(), bn->named_parameters().keys());
  EXPECT_EQ(sync->named_buffers().keys(), bn->named_buffers().keys());
  {
    at::NoGradGuard no_grad;
    auto dst = sync->named_parameters();
    for (const auto& p : bn->named_parameters()) dst[p.key()].copy_(p.value());
    auto dst_buffers = sync->named_buffers();
    for (const auto& b : bn->named_buffers()) dst_buffers[b.key()].copy_(b.value());
  }
  // Without a process group (one process) SyncBN is BatchNorm: the same losses.
  at::manual_seed(3);
  const at::Tensor xyz =
      at::rand({4000, 3}) * at::tensor({40.9f, 40.9f, 3.9f}) + at::tensor({0.0f, -20.45f, -2.95f});
  engine::Batch batch;
  batch.size = 1;
  batch.lists["points"] = {at::cat({xyz, at::rand({4000, 1})}, 1)};
  batch.lists["gt_bboxes_3d"] = {
      at::tensor({10.0f, -3.0f, -1.6f, 3.9f, 1.6f, 1.56f, 0.4f}).view({1, 7})};
  batch.lists["gt_labels_3d"] = {at::zeros({1}, at::kLong)};
  batch.meta = {{{"sample_idx", "0"}}};
  bn->train();
  sync->train();
  const engine::LossMap want = bn->forward_train(batch);
  const engine::LossMap got = sync->forward_train(batch);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, value] : want) {
    ASSERT_TRUE(std::isfinite(value.item<double>())) << name;
    EXPECT_EQ(got.at(name).item<double>(), value.item<double>()) << name;
  }
}

// The config error names the offending key (and the config's file).
void expect_config_error(const std::string& option, const std::string& key) {
  try {
    build({option});
    FAIL() << option << " was accepted";
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(key), std::string::npos) << what;
    EXPECT_NE(what.find("SyncBN"), std::string::npos) << "the accepted values: " << what;
  }
}

TEST(NormCfg, UnknownTypeIsAConfigErrorNamingTheKey) {
  expect_config_error("model.backbone.norm_cfg.type=GN", "model.backbone.norm_cfg.type");
  expect_config_error("model.neck.norm_cfg.type=SyncBatchNorm", "model.neck.norm_cfg.type");
  // The dimension must fit the layer, as in mmdet3d (BatchNorm2d cannot take PFN's [N, C]).
  expect_config_error("model.voxel_encoder.norm_cfg.type=BN2d",
                      "model.voxel_encoder.norm_cfg.type");
  expect_config_error("model.backbone.norm_cfg.type=BN1d", "model.backbone.norm_cfg.type");
}

}  // namespace
}  // namespace ddp3d::models
