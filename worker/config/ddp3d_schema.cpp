// The schema of ddp3d's training configs. Names and defaults follow mmengine / mmdetection3d
// (v1.x config style), so an mmdet3d user finds the keys where they expect them.
#include <numbers>
#include <string>
#include <vector>

#include "worker/config/common_schemas.h"
#include "worker/config/schema.h"

namespace ddp3d::config {
namespace {

using S = Schema;
using Variants = std::vector<std::pair<std::string, std::vector<Field>>>;

using schemas::int_list;
using schemas::prob;
using schemas::range6;
using schemas::str_list;
using schemas::vec;

// The network: a registered model (component_schemas(), kind "model"); each model's library
// registers its keys.
S model() {
  return S::component("model").required().doc(
      "the network (mmdet3d's `model`): a detector, or the toy regressor that exercises the "
      "engine");
}

// ---- data --------------------------------------------------------------------------------

S transform() {
  const double quarter_pi = std::numbers::pi / 4;
  return S::map({})
      .variants({
          {"LoadPointsFromFile",
           {{"coord_type", S::string().one_of({"LIDAR"}).def("LIDAR")},
            {"load_dim", S::integer().min(1).def(4).doc("floats per point in the .bin file")},
            {"use_dim", S::integer().min(1).def(4).doc("leading dims kept")}}},
          {"LoadAnnotations3D",
           {{"with_bbox_3d", S::boolean().def(true)}, {"with_label_3d", S::boolean().def(true)}}},
          {"ObjectSample",
           {{"db_sampler",
             S::map({{"data_root", S::string().required()},
                     {"info_path", S::string().required().doc("GT database index")},
                     {"rate", prob().def(1.0)},
                     {"prepare",
                      S::map({{"filter_by_difficulty", S::list(S::integer()).def_int_list({-1})},
                              {"filter_by_min_points", S::dict(S::integer().min(0))}})
                          .def_empty_map()},
                     {"classes", str_list().required()},
                     {"sample_groups", S::dict(S::integer().min(0))
                                           .required()
                                           .doc("class -> objects to paste per sample")},
                     {"points_loader", S::map({{"type", S::string().one_of({"LoadPointsFromFile"})},
                                               {"coord_type", S::string().one_of({"LIDAR"})},
                                               {"load_dim", S::integer().min(1)},
                                               {"use_dim", S::integer().min(1)}})}})
                 .required()},
            {"use_ground_plane", S::boolean().def(false)}}},
          {"ObjectNoise",
           {{"num_try", S::integer().min(1).def(100)},
            {"translation_std", vec(3).def_list({0.25, 0.25, 0.25})},
            {"global_rot_range", vec(2).def_list({0.0, 0.0})},
            {"rot_range", vec(2).def_list({-std::numbers::pi / 15, std::numbers::pi / 15})}}},
          {"RandomFlip3D",
           {{"flip_ratio_bev_horizontal", prob().def(0.0).doc("probability of flipping y")},
            {"flip_ratio_bev_vertical", prob().def(0.0).doc("probability of flipping x")}}},
          {"GlobalRotScaleTrans",
           {{"rot_range", vec(2).def_list({-quarter_pi, quarter_pi}).doc("radians")},
            {"scale_ratio_range", vec(2).def_list({0.95, 1.05})},
            {"translation_std", vec(3).def_list({0.0, 0.0, 0.0})}}},
          {"PointsRangeFilter", {{"point_cloud_range", range6().required()}}},
          {"ObjectRangeFilter", {{"point_cloud_range", range6().required()}}},
          {"ObjectNameFilter", {{"classes", str_list().required()}}},
          {"PointShuffle", {}},
          {"Pack3DDetInputs", {{"keys", str_list().required()}}},
      })
      .named("Transform")
      .doc("One data transform (mmdet3d's pipeline names); `type` picks it.");
}

std::vector<Field> kitti_fields(bool synthetic) {
  std::vector<Field> fields = {
      {"data_root", S::string().required().doc("dataset folder (KITTI layout)")},
      {"split", S::string().required().doc("ImageSets/<split>.txt lists the samples")},
      {"data_prefix",
       S::map({{"pts",
                S::string().def("training/velodyne").doc("point clouds, relative to data_root")}})
           .def_empty_map()},
      {"metainfo",
       S::map({{"classes", str_list().min_length(1).required().doc("class names, label order")}})
           .required()},
      {"pipeline", S::list(transform()).def(Value::list()).doc("transforms, in order")},
      {"test_mode", S::boolean().def(false).doc("no labels needed; no augmentation")},
      {"box_type_3d", S::string().one_of({"LiDAR"}).def("LiDAR")},
  };
  if (synthetic) {
    fields.push_back({"num_scenes", S::integer().min(1).required().doc(
                                        "scenes written by `ddp3d data synth-kitti` if absent")});
    fields.push_back({"seed", S::integer().min(0).def(0).doc("generator seed")});
    fields.push_back({"val_fraction", S::number().min(0).def(0.2).doc(
                                          "share of the scenes (the last ones) in the val split")});
    fields.push_back({"max_object_distance",
                      S::number().min(4, true).def(60.0).doc("labelled objects lie at x <= this")});
    fields.push_back({"max_object_lateral",
                      S::number().min(0, true).def(38.0).doc("... and at |y| <= this (metres)")});
  }
  return fields;
}

Variants dataset_variants(bool with_repeat);

S dataset(bool with_repeat) {
  return S::map({})
      .variants(dataset_variants(with_repeat))
      .named(with_repeat ? "Dataset" : "InnerDataset")
      .required()
      .doc(with_repeat ? "A dataset; `type` picks it."
                       : "The dataset a RepeatDataset wraps (any dataset but RepeatDataset).");
}

Variants dataset_variants(bool with_repeat) {
  Variants v = {
      {"KittiDataset", kitti_fields(false)},
      {"SyntheticKitti", kitti_fields(true)},
      {"SyntheticRegression",
       {{"num_samples", S::integer().min(1).required()},
        {"noise", S::number().min(0).def(0.0).doc("std of Gaussian noise on the targets")},
        {"seed",
         S::integer().min(0).def(0).doc("the true weights and the samples depend only on it")},
        {"test_mode", S::boolean().def(false).doc(
                          "draw samples from a stream disjoint from training's (same weights)")}}},
  };
  if (with_repeat) {
    v.push_back({"RepeatDataset",
                 {{"times", S::integer().min(1).required().doc("each epoch sees it this often")},
                  {"dataset", dataset(false)}}});
  }
  return v;
}

// Loader threads per process. More than a node has hardware threads only adds contention, and
// the largest nodes have a few hundred; 1024 (also --nproc-per-node's bound) leaves room for
// them while catching a typo such as 100000 here, before any thread or process starts, rather
// than when the threads fail to start.
constexpr int kMaxLoaderWorkers = 1024;

S dataloader(bool shuffle, const char* doc) {
  return S::map({
                    {"batch_size", S::integer().min(1).required().doc("samples per process")},
                    {"num_workers", S::integer()
                                        .min(0)
                                        .max(kMaxLoaderWorkers)
                                        .def(0)
                                        .doc("background loader threads (per process)")},
                    {"persistent_workers",
                     S::boolean().def(false).doc(
                         "accepted from mmdet3d configs, no effect: loader threads start per "
                         "epoch in microseconds (mmdet3d's are processes)")},
                    {"drop_last", S::boolean().def(false)},
                    {"sampler",
                     S::map({{"type", S::string().one_of({"DefaultSampler"}).def("DefaultSampler")},
                             {"shuffle", S::boolean().def(shuffle).doc("reshuffle every epoch")},
                             {"seed", S::integer().nullable().doc("null: randomness.seed")}})
                         .def_empty_map()
                         .doc("DistributedSampler semantics: shard by rank")},
                    {"dataset", dataset(true)},
                })
      .doc(doc);
}

S evaluator() {
  return S::map({})
      .variants({{"KittiMetric",
                  {{"metric", S::string().one_of({"bbox"}).def("bbox")},
                   {"pcd_limit_range", range6().def_list({0, -40, -3, 70.4, 40, 0.0})},
                   {"submission_prefix",
                    S::string().def_null().doc(
                        "a folder: the detections as KITTI result files, <frame id>.txt each "
                        "(`ddp3d test --submission-dir`)")},
                   {"format_only", S::boolean().def(false).doc(
                                       "only write submission_prefix's files, no AP (for "
                                       "frames without labels, e.g. KITTI's test split)")}}},
                 {"RegressionMetric", {}}})
      .doc("metric computed on the val/test data (rank 0 merges the shards)");
}

// ---- schedule and runtime ----------------------------------------------------------------

S optim_wrapper() {
  return S::component("optim_wrapper", "OptimWrapper")
      .required()
      .doc(
          "a registered optimizer wrapper (worker/engine's optim_wrapper_schemas.cpp): "
          "OptimWrapper, or AmpOptimWrapper for mixed precision (float16: CUDA only)");
}

// Each entry a registered scheduler (kind "param_scheduler": worker/engine's
// param_scheduler_schemas.cpp and whatever a library adds).
S param_scheduler() {
  return S::list(S::component("param_scheduler")
                     .doc("One learning-rate or momentum schedule phase (mmengine's names); "
                          "phases of the same parameter act one after another by begin/end."))
      .single_as_list()
      .def(Value::list())
      .doc(
          "lr/momentum schedules; mmdet3d's cyclic schedule is two cosine phases per "
          "parameter");
}

// A registered train loop (kind "train_loop": worker/engine's train_loop_schemas.cpp).
S train_cfg() {
  return S::component("train_loop", "EpochBasedTrainLoop")
      .default_variant_if("by_epoch", false, "IterBasedTrainLoop")
      .required()
      .doc(
          "the training loop: EpochBasedTrainLoop (max_epochs) or IterBasedTrainLoop "
          "(max_iters); mmengine's older `by_epoch: false` without a type is the latter");
}

// mmengine's default_hooks: each key names a registered hook (component kind "hook", whose
// keys hooks/hook_schemas.cpp holds), defaulting to the standard one; null turns it off.
S default_hook(const char* type, const char* what) {
  return S::component("hook", type)
      .def_empty_map()
      .nullable()
      .named("Hook")
      .doc(std::string(what) + "; type: any registered hook (default " + type + "); null: none.");
}

S default_hooks() {
  return S::map(
             {
                 {"timer", default_hook("IterTimerHook", "times data loading and iterations")},
                 {"logger", default_hook("LoggerHook", "logs losses and throughput")},
                 {"param_scheduler", default_hook("ParamSchedulerHook", "steps param_scheduler")},
                 {"checkpoint", default_hook("CheckpointHook", "saves checkpoints")},
                 {"sampler_seed",
                  default_hook("DistSamplerSeedHook", "reseeds the sampler each epoch")},
                 {"visualization",
                  default_hook("Det3DVisualizationHook", "draws validation frames")},
                 {"check_invalid_loss",
                  default_hook("CheckInvalidLossHook", "acts on a non-finite loss")},
             })
      .def_empty_map()
      .doc("the runner's standard hooks");
}

// mmengine's visualizer: where LoggerHook's scalars, validation metrics and pictures go.
S visualizer() {
  return S::map({{"type", S::string()
                              .one_of({"Visualizer", "Det3DLocalVisualizer"})
                              .def("Visualizer")
                              .doc("accepted for mmengine/mmdet3d configs; both behave the same")},
                 {"name", S::string().def("visualizer")},
                 {"vis_backends",
                  S::list(S::map({{"type", S::string()
                                               .one_of({"LocalVisBackend", "TensorboardVisBackend"})
                                               .required()
                                               .doc("LocalVisBackend: <work_dir>/<timestamp>/"
                                                    "vis_data/scalars.json; "
                                                    "TensorboardVisBackend: TensorBoard event "
                                                    "files in <work_dir>/tensorboard, one "
                                                    "history across resumes (docs/training.md)")}}))
                      .doc("the backends, rank 0 writes them; missing: LocalVisBackend alone")}})
      .def_empty_map()
      .doc("training scalars and pictures besides the log (mmengine's visualizer)");
}

// Peer heartbeats through the rendezvous store (docs/ddp.md, "Lost peers").
S heartbeat_interval() {
  return S::number().min(0, true).max(3600).def(2.0).doc(
      "seconds between a rank's heartbeats through the rendezvous store");
}

S heartbeat_timeout() {
  return S::number().min(0).max(86400).def(20.0).doc(
      "seconds without a peer's heartbeat (or a store answer) before a rank stops with exit "
      "code 200, naming the peer; 0: off; at least twice heartbeat_interval (docs/ddp.md)");
}

S env_cfg() {
  return S::map({
                    {"cudnn_benchmark", S::boolean().def(false)},
                    {"dist_cfg", S::map({{"backend", S::string()
                                                         .one_of({"auto", "nccl", "gloo"})
                                                         .def("auto")
                                                         .doc("auto: nccl with CUDA, else gloo")},
                                         {"timeout", S::integer().min(1).def(1800).doc(
                                                         "seconds a collective may wait")},
                                         {"shared_memory_allreduce",
                                          S::boolean().def(true).doc(
                                              "gloo ranks all on one node all-reduce gradients "
                                              "through shared memory (docs/ddp.md)")},
                                         {"heartbeat_interval", heartbeat_interval()},
                                         {"heartbeat_timeout", heartbeat_timeout()}})
                                     .def_empty_map()},
                    {"metrics_port",
                     S::integer().min(0).max(65535).def_null().doc(
                         "serve Prometheus /metrics on this port + LOCAL_RANK (0: any free "
                         "port; null: off); DDP3D_METRICS_PORT overrides it")},
                })
      .def_empty_map()
      .doc("process-group environment");
}

S schema_root() {
  return S::map({
      {"model", model()},
      {"train_dataloader", dataloader(true, "training data").required()},
      {"val_dataloader", dataloader(false, "validation data (optional)")},
      {"test_dataloader", dataloader(false, "test data (optional)")},
      {"val_evaluator", evaluator()},
      {"test_evaluator", evaluator()},
      {"optim_wrapper", optim_wrapper()},
      {"param_scheduler", param_scheduler()},
      {"train_cfg", train_cfg()},
      {"val_cfg", S::component("val_loop", "ValLoop")
                      .def_empty_map()
                      .doc("the validation loop (worker/engine's eval_loop_schemas.cpp)")},
      {"test_cfg", S::component("test_loop", "TestLoop")
                       .def_empty_map()
                       .doc("the loop of `ddp3d test` (worker/engine's eval_loop_schemas.cpp)")},
      {"auto_scale_lr", S::map({{"enable", S::boolean().def(false)},
                                {"base_batch_size", S::integer().min(1).def(48).doc(
                                                        "total batch the lr was tuned for")}})
                            .def_empty_map()
                            .doc("scale lr by (world batch / base_batch_size) when enabled")},
      {"default_hooks", default_hooks()},
      {"custom_hooks", S::list(S::component("hook").named("Hook"))
                           .def(Value::list())
                           .doc("more hooks, mmengine's custom_hooks: [{type: EMAHook, ...}]")},
      {"visualizer", visualizer()},
      {"env_cfg", env_cfg()},
      {"randomness",
       S::map({{"seed", S::integer().min(0).def_null().doc("null: a random seed, logged")},
               {"deterministic", S::boolean().def(false).doc("deterministic kernels")},
               {"diff_rank_seed", S::boolean().def(false).doc("seed + rank on each rank")}})
           .def_empty_map()
           .doc("seeding (`--seed` and `--deterministic` set these)")},
      {"ddp",
       S::map({{"find_unused_parameters",
                S::boolean().def(false).doc(
                    "mark parameters without gradient ready (else such a step fails)")},
               {"bucket_cap_mb", S::number().min(0, true).def(25.0).doc("gradient bucket size")},
               {"first_bucket_cap_mb",
                S::number().min(0, true).def(1.0).doc("smaller first bucket, starts early")},
               {"broadcast_buffers",
                S::boolean().def(true).doc("broadcast rank 0's buffers every forward")}})
           .def_empty_map()
           .doc("ddp3d's DistributedDataParallel")},
      {"log_processor",
       S::map({{"window_size", S::integer().min(1).def(50).doc("iterations smoothed in the log")},
               {"by_epoch", S::boolean().def(true)}})
           .def_empty_map()},
      {"log_level", S::string().one_of({"DEBUG", "INFO", "WARNING", "ERROR"}).def("INFO")},
      {"work_dir",
       S::string().def_null().doc(
           "logs and checkpoints; null: work_dirs/<config name> (`--work-dir` sets it)")},
      {"load_from", S::string().def_null().doc("checkpoint to start from (or resume from)")},
      {"resume", S::boolean().def(false).doc(
                     "resume: from load_from, or the newest checkpoint in work_dir if null")},
  });
}

}  // namespace

const Schema& ddp3d_schema() {
  static const Schema schema = schema_root();
  return schema;
}

}  // namespace ddp3d::config
