// One evaluation pass in mmengine's ValLoop/TestLoop shape, shared by validation during
// training and by `ddp3d test`.
#pragma once

#include "worker/engine/dataset.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/model.h"
#include "worker/engine/run_context.h"
#include "worker/engine/runner_options.h"

namespace ddp3d::engine {

// Evaluates `model` on `dataset` (this rank's shard, no shuffle) with `evaluator`; every rank's
// records are gathered on rank 0 in dataset order, padding dropped, and scored there. Returns
// the metrics on rank 0 and an empty map on the others. Leaves the model in training mode.
// With `draw`, the evaluator also draws every batch's predictions (Evaluator::draw).
MetricMap evaluate(Model& model, const Dataset& dataset, const LoaderSpec& loader,
                   Evaluator& evaluator, const RunContext& ctx, const DrawOptions* draw = nullptr);

}  // namespace ddp3d::engine
