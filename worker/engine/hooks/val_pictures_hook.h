// mmdet3d's Det3DVisualizationHook during training (default_hooks.visualization.draw): it asks the
// loop to have rank 0 draw the first validation frames of each validation (TrainLoop::validate,
// Evaluator::draw); after each validation the pictures go to the visualization backends as images
// "val/bev/<file name>" at the validation's step (TensorBoard's image dashboard, LocalVisBackend's
// vis_image/), and their folder is removed, by rank 0 alone (the other ranks may share its work
// dir).
#pragma once

#include <filesystem>

#include "worker/engine/evaluator.h"
#include "worker/engine/hook.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {

class ValPicturesHook final : public Hook {
 public:
  // `log` must outlive the hook; `draw.dir` is where the pictures are drawn (emptied each time).
  ValPicturesHook(TrainLog& log, DrawOptions draw);
  void before_train(LoopContext& loop) override;
  void after_val(LoopContext& loop, const ValResult& result) override;

 private:
  TrainLog& log_;
  DrawOptions draw_;
};

}  // namespace ddp3d::engine
