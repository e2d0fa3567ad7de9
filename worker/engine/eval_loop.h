// val_cfg's and test_cfg's loops (mmengine's ValLoop and TestLoop): how a model is scored on a
// dataset. Validation during training runs the loop val_cfg names; `ddp3d test` runs test_cfg's.
// Built in: ValLoop and TestLoop, one evaluation pass each (evaluate.h). A new loop is an
// EvalLoop, its keys (component kind "val_loop" or "test_loop", eval_loop_schemas.h) and one
// add() to eval_loop_registry() (eval_loop_registry.h).
#pragma once

#include "worker/engine/dataset.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/metric_map.h"
#include "worker/engine/model.h"
#include "worker/engine/run_context.h"
#include "worker/engine/runner_options.h"

namespace ddp3d::engine {

// What one evaluation works on; all of it outlives the call.
struct EvalPass {
  Model& model;
  const Dataset& dataset;
  const LoaderSpec& loader;
  Evaluator& evaluator;
  const RunContext& ctx;
  const DrawOptions* draw = nullptr;  // non-null: the evaluator also draws the predictions
};

class EvalLoop {
 public:
  virtual ~EvalLoop() = default;
  // Every rank calls it; the metrics are rank 0's (an empty map on the others). Leaves the model
  // in training mode.
  virtual MetricMap run(const EvalPass& pass) const = 0;
};

}  // namespace ddp3d::engine
