// The training loop (mmengine's EpochBasedTrainLoop + the standard hooks): per iteration it
// loads a batch (background loaders), sets lr/momentum from the schedule, runs forward/backward
// (optional autocast and fp16 loss scaling), synchronises gradients across ranks on the last
// iteration of each accumulation group, clips, steps, and logs; per epoch it checkpoints
// (rank 0) and validates (results gathered on rank 0).
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <string>

#include "worker/engine/dataset.h"
#include "worker/engine/evaluator.h"
#include "worker/engine/model.h"
#include "worker/engine/runner_options.h"
#include "worker/engine/train_log.h"
#include "worker/engine/train_telemetry.h"

namespace ddp3d::dist {
class ProcessGroup;
class DistributedDataParallel;
}  // namespace ddp3d::dist

namespace ddp3d::engine {

struct RunContext {
  dist::ProcessGroup* pg = nullptr;  // null: one process
  int rank = 0;
  int world_size = 1;
  at::Device device = at::Device(at::kCPU);
  std::uint64_t seed = 0;  // the run's seed (same on every rank)
};

// Seeds for the data: sample `index` in `epoch` on `rank` draws its augmentation from a
// generator seeded with this, so runs and resumes repeat exactly whatever the thread schedule.
std::uint64_t data_seed(std::uint64_t seed, int rank, std::int64_t epoch, std::int64_t index);

// This rank's sample indices for `epoch` (dist::DistributedSampler semantics).
std::vector<std::int64_t> epoch_indices(std::int64_t dataset_size, const RunContext& ctx,
                                        bool shuffle, std::uint64_t seed, std::int64_t epoch,
                                        bool drop_last);

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec, Model& model);

// Evaluates `model` on `dataset` (this rank's shard, no shuffle) with `evaluator`; every rank's
// records are gathered on rank 0 in dataset order, padding dropped, and scored there. Returns
// the metrics on rank 0 and an empty map on the others.
MetricMap evaluate(Model& model, const Dataset& dataset, const LoaderSpec& loader,
                   Evaluator& evaluator, const RunContext& ctx);

class Runner {
 public:
  Runner(RunnerOptions options, RunContext ctx, std::shared_ptr<Model> model,
         std::shared_ptr<const Dataset> train_data, std::shared_ptr<const Dataset> val_data,
         std::shared_ptr<Evaluator> val_evaluator, TrainLog& log);
  ~Runner();

  // Resumes when options.resume says so, then trains to max_epochs.
  void train();

  std::int64_t start_epoch() const { return start_epoch_; }

  // Optional observer of every iteration (not owned; must outlive train()).
  void set_telemetry(TrainTelemetry* telemetry) { telemetry_ = telemetry; }

 private:
  void resume();
  void train_epoch(std::int64_t epoch);
  void save_checkpoint(std::int64_t epochs_done);

  RunnerOptions options_;
  RunContext ctx_;
  std::shared_ptr<Model> model_;
  std::shared_ptr<const Dataset> train_data_;
  std::shared_ptr<const Dataset> val_data_;
  std::shared_ptr<Evaluator> val_evaluator_;
  TrainLog& log_;
  TrainTelemetry* telemetry_ = nullptr;

  std::unique_ptr<dist::DistributedDataParallel> ddp_;  // null: one process
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<class ParamSchedule> schedule_;
  std::unique_ptr<class GradAccumulation> accumulation_;
  std::unique_ptr<class DynamicLossScaler> scaler_;
  std::int64_t iters_per_epoch_ = 0;
  std::int64_t start_epoch_ = 0;
  std::int64_t global_iter_ = 0;  // iterations completed
};

}  // namespace ddp3d::engine
