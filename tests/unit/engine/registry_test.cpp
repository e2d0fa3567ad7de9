#include "worker/engine/registry.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "worker/components/builtin_components.h"
#include "worker/process/session.h"

namespace ddp3d::engine {
namespace {

const char* kToy = R"(
model: {type: ToyRegressor, in_features: 8, hidden: [16]}
train_dataloader:
  batch_size: 4
  dataset: {type: SyntheticRegression, num_samples: 32, noise: 0.0, seed: 3}
val_evaluator: {type: RegressionMetric}
optim_wrapper:
  optimizer: {type: SGD, lr: 0.1}
train_cfg: {max_epochs: 1}
)";

TEST(Registry, BuildsTheToyComponentsFromConfig) {
  components::register_builtin_components();
  const config::Config cfg = config::parse(kToy, "toy.yaml");
  auto model = model_registry().build(cfg.node("model"));
  auto data = dataset_registry().build(cfg.node("train_dataloader.dataset"));
  auto metric = evaluator_registry().build(cfg.node("val_evaluator"));
  ASSERT_TRUE(model && data && metric);
  EXPECT_EQ(data->size(), 32);
  at::Generator g = at::detail::getDefaultCPUGenerator();
  const Batch batch = data->collate({data->get(0, g), data->get(1, g)});
  const LossMap losses = model->forward_train(batch);
  EXPECT_GT(total_loss(losses).item<double>(), 0.0);
  // The data is a pure function of (seed, index).
  EXPECT_TRUE(at::equal(data->get(5, g).tensor("inputs"), data->get(5, g).tensor("inputs")));
}

TEST(Registry, UnknownTypeNamesKeyFileAndKnownTypes) {
  Registry<Model> registry("model");
  registry.add("A", [](const config::Config&) -> std::shared_ptr<Model> { return nullptr; });
  EXPECT_THROW(registry.add("A", nullptr), std::logic_error);
  // The schema already rejects types it does not know; a type the schema knows but no library
  // registered (a component not linked in) is the registry's error.
  components::register_builtin_schemas();
  const config::Config cfg = config::parse(kToy, "toy.yaml");
  try {
    registry.build(cfg.node("model"));
    FAIL();
  } catch (const config::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("toy.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find("model.type"), std::string::npos) << what;
    EXPECT_NE(what.find("ToyRegressor"), std::string::npos) << what;
    EXPECT_NE(what.find("registered: A"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ddp3d::engine
