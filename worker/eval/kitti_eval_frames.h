// The evaluation input: per frame, the ground-truth objects and the detections, both in KITTI
// label form. A KittiEvalFrames set is what each rank accumulates over its shard; it
// serialises to a compact byte string so rank 0 can gather the shards and merge them before
// computing AP (kitti_eval.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ddp3d::eval {

// One object as a KITTI label line describes it (the same fields as data/kitti_label.h's
// KittiObject, so a conversion is a field-by-field copy). For detections `score` is the
// confidence; `truncated` / `occluded` are unused. `alpha` = -10 means "no observation angle"
// (the devkit's convention): AOS is only computed when detections and ground truth carry it.
struct EvalObject {
  std::string type;                    // Car, Pedestrian, Cyclist, Van, DontCare, ...
  double truncated = 0;                // 0..1
  int occluded = 0;                    // 0..3
  double alpha = -10;                  // observation angle, [-pi, pi]
  std::array<double, 4> bbox{};        // 2D image box: left, top, right, bottom (px)
  std::array<double, 3> dimensions{};  // height, width, length (m)
  std::array<double, 3> location{};    // camera frame x, y, z of the bottom centre (m)
  double rotation_y = 0;               // yaw about the camera y axis
  double score = 0;                    // detection confidence

  bool operator==(const EvalObject&) const = default;
};

struct EvalFrame {
  std::int64_t frame_id = 0;  // dataset sample index: unique per frame, used to merge shards
  std::vector<EvalObject> ground_truth;
  std::vector<EvalObject> detections;

  bool operator==(const EvalFrame&) const = default;
};

// The frames seen so far, ordered by frame_id. Adding the same frame_id twice is accepted
// only when the content is identical (a distributed sampler pads shards by repeating
// samples; those copies are counted once) and is an error otherwise.
class KittiEvalFrames {
 public:
  // Throws std::invalid_argument naming the frame and field on non-finite values or a
  // conflicting duplicate.
  void add(EvalFrame frame);
  void merge(const KittiEvalFrames& other);

  const std::map<std::int64_t, EvalFrame>& frames() const { return frames_; }
  std::size_t size() const { return frames_.size(); }

  // Compact little-endian byte form ("DDP3DKE1" magic, then frames).
  std::string serialize() const;
  // Throws std::invalid_argument saying where the bytes are malformed.
  static KittiEvalFrames deserialize(std::string_view bytes);

 private:
  std::map<std::int64_t, EvalFrame> frames_;
};

// Rank 0's side of distributed evaluation: the gathered serialize() outputs of every rank,
// merged. A malformed shard is reported with its index (= the rank that sent it).
KittiEvalFrames merge_serialized_shards(const std::vector<std::string>& shards);

}  // namespace ddp3d::eval
