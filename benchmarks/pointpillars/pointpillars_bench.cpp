// PointPillars training-step throughput of ddp3d, stage by stage, one rank per process (started
// by benchmarks/pointpillars/run with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT). The
// stages, data order, augmentation draws and timing match torch_pointpillars_bench.py:
//
//   load      KittiDataset::load: velodyne .bin, label_2, calib, camera → LiDAR boxes
//   pipeline  RandomFlip3D, GlobalRotScaleTrans, PointsRangeFilter, ObjectRangeFilter,
//             PointShuffle (the demo config's train pipeline, in its order)
//   voxelize  hard voxelization per sample + collate
//   forward   DDP prepare_forward (buffer broadcast), VoxelNet::forward_train (network, anchor
//             targets, losses), Σ losses
//   assign    the part of forward spent in Anchor3DHead::targets (anchor-target assignment)
//   backward  loss.backward() and DDP finalize (bucket all-reduces overlap the backward)
//   allreduce_wait  the part of backward after the last gradient was computed: time blocked
//             on DDP's finalize (waiting for all-reduces, writing averaged gradients)
//   optimizer clip_grad_norm_, AdamW step, zero_grad
//
//   pointpillars_bench --config CFG --data ROOT [--iters N] [--warmup N] [--batch B]
//                      [--seed S] [--no-ddp] [--no-shuffle] [--profile TRACE.json]
//   pointpillars_bench --config CFG --dump-spec FILE   (the spec as JSON for the reference)
//   pointpillars_bench --synth-kitti OUT [--scenes N] [--seed S]   (the data, written once)
//
// --profile: rank 0 records the timed iterations with LibTorch's (Kineto) profiler and writes a
// Chrome trace; profile_compare.py puts two traces' per-operator self times side by side.
// Rank 0 prints `STAGE_MS <stage> <wall ms> <main-thread CPU ms>` per iteration, `ITERS_PER_S <x>`
// and checks.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/pointpillars/augment_draw.h"
#include "benchmarks/pointpillars/bench_spec.h"
#include "benchmarks/pointpillars/stage_clock.h"
#include "worker/components/builtin_components.h"
#include "worker/data/kitti_dataset.h"
#include "worker/data/synthetic_kitti.h"
#include "worker/data/transforms.h"
#include "worker/data/voxelization.h"
#include "worker/dist/ddp.h"
#include "worker/dist/dist_env.h"
#include "worker/dist/process_group.h"
#include "worker/models/dense_heads/anchor3d_head.h"
#include "worker/models/detectors/voxelnet.h"

namespace {

using ddp3d::bench::Clock;
using ddp3d::bench::Mark;

struct Args {
  std::string config, data, dump_spec, synth_out, profile;
  int scenes = 64;
  std::string split = "train";
  int iters = 20, warmup = 3, batch = 0;
  std::uint64_t seed = 0;
  bool ddp = true;
  bool shuffle = true;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
      return argv[++i];
    };
    if (k == "--config")
      a.config = next();
    else if (k == "--data")
      a.data = next();
    else if (k == "--split")
      a.split = next();
    else if (k == "--dump-spec")
      a.dump_spec = next();
    else if (k == "--iters")
      a.iters = std::stoi(next());  // 0: print the checks, train nothing
    else if (k == "--warmup")
      a.warmup = std::stoi(next());
    else if (k == "--batch")
      a.batch = std::stoi(next());
    else if (k == "--seed")
      a.seed = std::stoull(next());
    else if (k == "--synth-kitti")
      a.synth_out = next();
    else if (k == "--scenes")
      a.scenes = std::stoi(next());
    else if (k == "--no-ddp")
      a.ddp = false;
    else if (k == "--no-shuffle")
      a.shuffle = false;
    else if (k == "--profile")
      a.profile = next();
    else
      throw std::invalid_argument("unknown argument " + k);
  }
  if (!a.synth_out.empty()) return a;
  if (a.config.empty()) throw std::invalid_argument("--config is required");
  if (a.dump_spec.empty() && a.data.empty()) throw std::invalid_argument("--data is required");
  return a;
}

double process_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One batch through load → pipeline → voxelize, timed per stage.
struct Batch {
  ddp3d::data::Voxels voxels;
  std::vector<at::Tensor> gt_boxes, gt_labels;
};

Batch prepare_batch(const ddp3d::data::KittiDataset& dataset, const ddp3d::bench::BenchSpec& spec,
                    const ddp3d::bench::DrawKey& key_base, int iteration, int rank, int world,
                    ddp3d::bench::StageClock& clock) {
  namespace data = ddp3d::data;
  const int batch = spec.batch_size;
  std::vector<data::DetectionSample> samples(static_cast<size_t>(batch));
  Mark t;
  for (int j = 0; j < batch; ++j) {
    const auto index = ddp3d::bench::sample_index(iteration, rank, world, batch, j, dataset.size());
    data::KittiFrame frame = dataset.load(index);
    samples[static_cast<size_t>(j)] = {frame.points, frame.gt_boxes, frame.gt_labels};
  }
  clock.add("load", t);

  t = Mark();
  const auto& range = spec.voxel.point_cloud_range;
  for (int j = 0; j < batch; ++j) {
    auto& s = samples[static_cast<size_t>(j)];
    const ddp3d::bench::AugmentDraw d =
        ddp3d::bench::draw_augment(key_base, iteration, rank, j, spec.augment);
    if (d.flip) data::flip_bev(s);
    data::rotate_scale_translate(s, d.angle, d.scale, {0, 0, 0});
    data::points_range_filter(s, range);
    data::object_range_filter(s, range);
    if (spec.augment.point_shuffle) {
      std::mt19937_64 rng(d.shuffle_seed);
      data::point_shuffle(s, rng);
    }
  }
  clock.add("pipeline", t);

  t = Mark();
  std::vector<data::Voxels> per_sample;
  per_sample.reserve(samples.size());
  for (const auto& s : samples) per_sample.push_back(data::voxelize(s.points, spec.voxel));
  Batch b;
  b.voxels = data::collate_voxels(per_sample);
  clock.add("voxelize", t);
  for (auto& s : samples) {
    b.gt_boxes.push_back(s.gt_boxes);
    b.gt_labels.push_back(s.gt_labels);
  }
  return b;
}

// Positive anchors the assigner finds for a batch (a cross-check against the reference: the
// same inputs must give the same count).
std::int64_t count_positives(ddp3d::models::VoxelNet& model, const Batch& b) {
  const at::NoGradGuard no_grad;
  const auto head = std::dynamic_pointer_cast<ddp3d::models::Anchor3DHeadImpl>(model->bbox_head());
  if (!head) throw std::invalid_argument("count_positives: the model's head is no Anchor3DHead");
  const auto out =
      head->forward(model->extract_feat(b.voxels.voxels, b.voxels.num_points, b.voxels.coors,
                                        static_cast<std::int64_t>(b.gt_boxes.size())));
  const at::Tensor anchors =
      head->anchors(out.cls_score.size(2), out.cls_score.size(3), out.cls_score.options());
  const auto t = head->targets(anchors, b.gt_boxes, b.gt_labels);
  const auto c = head->options().num_classes;
  return ((t.labels >= 0) & (t.labels < c)).sum().item<std::int64_t>();
}

int run(const Args& args) {
  namespace bench = ddp3d::bench;
  if (!args.synth_out.empty()) {
    ddp3d::data::SynthKittiOptions o;
    o.scenes = args.scenes;
    o.seed = args.seed;
    const auto stats = ddp3d::data::write_synthetic_kitti(args.synth_out, o);
    std::printf("wrote %d scenes (%lld points, %d cars) to %s\n", stats.scenes,
                static_cast<long long>(stats.points), stats.cars, args.synth_out.c_str());
    return 0;
  }
  bench::BenchSpec spec =
      bench::bench_spec_from_config(ddp3d::config::load(args.config), args.config);
  if (args.batch > 0) spec.batch_size = args.batch;
  spec.augment.point_shuffle = args.shuffle;

  at::set_num_threads(1);
  torch::manual_seed(0);
  ddp3d::models::VoxelNet model(spec.model);
  const std::int64_t num_params = ddp3d::models::count_parameters(*model);
  if (!args.dump_spec.empty()) {
    std::ofstream(args.dump_spec) << bench::to_json(spec, num_params) << "\n";
    return 0;
  }

  const auto env = ddp3d::dist::dist_env_from_environment();
  const int world = args.ddp ? env.world_size : 1;
  const int rank = args.ddp ? env.rank : 0;
  std::unique_ptr<ddp3d::dist::ProcessGroup> pg;
  std::unique_ptr<ddp3d::dist::DistributedDataParallel> ddp;
  if (args.ddp) {
    pg = ddp3d::dist::init_process_group(env, {});
    ddp = std::make_unique<ddp3d::dist::DistributedDataParallel>(model.ptr(), *pg);
  }
  const ddp3d::data::KittiDataset dataset(args.data, args.split, spec.classes);
  torch::optim::AdamW optimizer(model->parameters(),
                                torch::optim::AdamWOptions(spec.optim.lr)
                                    .betas({spec.optim.betas[0], spec.optim.betas[1]})
                                    .eps(spec.optim.eps)
                                    .weight_decay(spec.optim.weight_decay));
  const bench::DrawKey key{args.seed};
  bench::StageClock clock;
  bench::AssignTimer assign_timer;

  if (rank == 0) {
    std::printf("PARAMS %lld\n", static_cast<long long>(num_params));
    bench::StageClock scratch;
    const Batch first = prepare_batch(dataset, spec, key, 0, 0, world, scratch);
    std::printf("CHECK iteration 0 rank 0: pillars %lld, gt boxes %lld, positive anchors %lld\n",
                static_cast<long long>(first.voxels.voxels.size(0)),
                static_cast<long long>(at::cat(first.gt_labels).numel()),
                static_cast<long long>(count_positives(model, first)));
    const at::Tensor v = first.voxels.voxels.to(at::kDouble);
    std::printf(
        "CHECK_VOXELS iteration 0 rank 0: sum %.6f, sum of squares %.6f, coors sum %lld\n",
        v.sum().item<double>(), (v * v).sum().item<double>(),
        static_cast<long long>(first.voxels.coors.to(at::kLong).sum().item<std::int64_t>()));
  }

  if (args.iters == 0) return 0;  // --iters 0: the checks only

  std::int64_t pillars = 0, points = 0;
  Mark start;
  double cpu_start = 0;
  for (int it = 0; it < args.warmup + args.iters; ++it) {
    if (it == args.warmup) {
      if (pg) pg->barrier();
      clock.reset();
      assign_timer.take();
      pillars = points = 0;
      if (!args.profile.empty() && rank == 0) {
        namespace prof = torch::profiler::impl;
        const prof::ProfilerConfig config(prof::ProfilerState::KINETO);
        torch::autograd::profiler::prepareProfiler(config, {prof::ActivityType::CPU});
        torch::autograd::profiler::enableProfiler(config, {prof::ActivityType::CPU});
      }
      start = Mark();
      cpu_start = process_cpu_s();
    }
    const Batch b = prepare_batch(dataset, spec, key, it, rank, world, clock);
    pillars += b.voxels.voxels.size(0);
    points += b.voxels.num_points.sum().item<std::int64_t>();

    Mark t;
    if (ddp) ddp->prepare_forward();
    const auto losses = model->forward_train(b.voxels.voxels, b.voxels.num_points, b.voxels.coors,
                                             b.gt_boxes, b.gt_labels);
    const at::Tensor loss = ddp3d::models::total_loss(losses);
    if (ddp) ddp->prepare_backward({loss});
    clock.add("forward", t);
    clock.add("assign", assign_timer.take());

    t = Mark();
    loss.backward();
    if (ddp) {
      const auto& st = ddp->finalize_backward();
      const auto done = Clock::now();
      clock.add_wall("allreduce_wait",
                     std::chrono::duration<double>(done - st.backward_end).count());
      clock.add_wall("ddp_internal_wait", st.allreduce_wait_s);
    }
    clock.add("backward", t);

    t = Mark();
    if (spec.optim.clip_max_norm > 0) {
      torch::nn::utils::clip_grad_norm_(model->parameters(), spec.optim.clip_max_norm, 2.0);
    }
    optimizer.step();
    optimizer.zero_grad();
    clock.add("optimizer", t);
    if (!std::isfinite(loss.item<double>())) throw std::runtime_error("loss is not finite");
  }
  if (pg) pg->barrier();
  const bench::Span run_time = bench::since(start);
  const double secs = run_time.wall;
  if (!args.profile.empty() && rank == 0) {
    torch::autograd::profiler::disableProfiler()->save(args.profile);
  }
  const double cpu_s = process_cpu_s() - cpu_start;
  if (rank == 0) {
    const double ms = 1e3 / args.iters;
    std::printf("ddp3d world=%d batch=%d iters=%d: %.3f s\n", world, spec.batch_size, args.iters,
                secs);
    for (const char* stage : {"load", "pipeline", "voxelize", "forward", "assign", "backward",
                              "allreduce_wait", "optimizer", "ddp_internal_wait"}) {
      const bench::Span t = clock.total(stage);
      std::printf("STAGE_MS %s %.3f %.3f\n", stage, t.wall * ms, t.cpu * ms);
    }
    std::printf("STAGE_MS step %.3f %.3f\n", secs * ms, run_time.cpu * ms);
    std::printf("PILLARS_PER_ITER %.1f\n", static_cast<double>(pillars) / args.iters);
    std::printf("POINTS_PER_ITER %.1f\n", static_cast<double>(points) / args.iters);
    std::printf("ITERS_PER_S %.4f\n", args.iters / secs);
    std::printf("CPU_MS_PER_ITER %.3f\n", 1e3 * cpu_s / args.iters);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    // The configs it reads are validated with the schemas ddp3d train uses.
    ddp3d::components::register_builtin_schemas();
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "pointpillars_bench: " << e.what() << "\n";
    return 1;
  }
}
