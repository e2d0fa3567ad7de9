// mmdet3d's Det3DVisualizationHook during training (default_hooks.visualization.draw): after each
// validation, the pictures rank 0 drew of the first validation frames (TrainLoop::validate,
// Evaluator::draw) go to the visualization backends as images "val/bev/<file name>" at the
// validation's step (TensorBoard's image dashboard, LocalVisBackend's vis_image/), and their
// folder is removed, by rank 0 alone (the other ranks may share its work dir).
#pragma once

#include <filesystem>

#include "worker/engine/hook.h"
#include "worker/engine/train_log.h"

namespace ddp3d::engine {

class ValPicturesHook final : public Hook {
 public:
  // `log` must outlive the hook; `dir` is RunnerOptions::val_picture_dir.
  ValPicturesHook(TrainLog& log, std::filesystem::path dir);
  void after_val(LoopContext& loop, const ValResult& result) override;

 private:
  TrainLog& log_;
  std::filesystem::path dir_;
};

}  // namespace ddp3d::engine
