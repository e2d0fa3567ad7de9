// The engine's registries (config::Registry, worker/config/registry.h): models, datasets and
// evaluators by their config `type`. The engine knows only these interfaces; the binary (or a
// test) registers the components it links (worker/components/builtin_components.h) before it
// builds anything from a config.
#pragma once

#include "worker/config/registry.h"
#include "worker/engine/dataset.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/model.h"

namespace ddp3d::engine {

template <typename T>
using Registry = config::Registry<T>;

Registry<Model>& model_registry();
Registry<Dataset>& dataset_registry();
Registry<Evaluator>& evaluator_registry();

}  // namespace ddp3d::engine
