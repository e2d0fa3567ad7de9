#include "worker/eval/kitti_eval_frames.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace ddp3d::eval {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the shard byte format is written in host order, which must be little-endian");

constexpr std::string_view kMagic = "DDP3DKE1";

std::string where(std::int64_t frame_id, const char* list, std::size_t index) {
  return "frame " + std::to_string(frame_id) + " " + list + "[" + std::to_string(index) + "]";
}

void check_finite(double v, const std::string& owner, const char* field) {
  if (!std::isfinite(v)) {
    throw std::invalid_argument("kitti eval: " + owner + "." + field + " is not finite");
  }
}

void validate(const EvalFrame& frame) {
  auto check_list = [&](const std::vector<EvalObject>& list, const char* name) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const EvalObject& o = list[i];
      const std::string owner = where(frame.frame_id, name, i);
      if (o.type.empty()) throw std::invalid_argument("kitti eval: " + owner + ".type is empty");
      if (o.type.size() > 255) {
        throw std::invalid_argument("kitti eval: " + owner + ".type is longer than 255 bytes");
      }
      check_finite(o.truncated, owner, "truncated");
      check_finite(o.alpha, owner, "alpha");
      for (double v : o.bbox) check_finite(v, owner, "bbox");
      for (double v : o.dimensions) check_finite(v, owner, "dimensions");
      for (double v : o.location) check_finite(v, owner, "location");
      check_finite(o.rotation_y, owner, "rotation_y");
      check_finite(o.score, owner, "score");
    }
  };
  check_list(frame.ground_truth, "ground_truth");
  check_list(frame.detections, "detections");
}

class Writer {
 public:
  template <typename T>
  void put(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    out_.append(buf, sizeof(T));
  }
  void put_bytes(std::string_view s) { out_.append(s); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view get_bytes(std::size_t n, const char* what) {
    need(n, what);
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == in_.size(); }
  std::size_t pos() const { return pos_; }

 private:
  void need(std::size_t n, const char* what) {
    if (in_.size() - pos_ < n) {
      throw std::invalid_argument("kitti eval shard: bytes end at offset " + std::to_string(pos_) +
                                  " while reading " + what);
    }
  }
  std::string_view in_;
  std::size_t pos_ = 0;
};

void write_object(Writer& w, const EvalObject& o) {
  w.put<std::uint8_t>(static_cast<std::uint8_t>(o.type.size()));
  w.put_bytes(o.type);
  w.put<double>(o.truncated);
  w.put<std::int32_t>(o.occluded);
  w.put<double>(o.alpha);
  for (double v : o.bbox) w.put<double>(v);
  for (double v : o.dimensions) w.put<double>(v);
  for (double v : o.location) w.put<double>(v);
  w.put<double>(o.rotation_y);
  w.put<double>(o.score);
}

EvalObject read_object(Reader& r) {
  EvalObject o;
  const auto len = r.get<std::uint8_t>("object type length");
  o.type = std::string(r.get_bytes(len, "object type"));
  o.truncated = r.get<double>("truncated");
  o.occluded = r.get<std::int32_t>("occluded");
  o.alpha = r.get<double>("alpha");
  for (double& v : o.bbox) v = r.get<double>("bbox");
  for (double& v : o.dimensions) v = r.get<double>("dimensions");
  for (double& v : o.location) v = r.get<double>("location");
  o.rotation_y = r.get<double>("rotation_y");
  o.score = r.get<double>("score");
  return o;
}

}  // namespace

void KittiEvalFrames::add(EvalFrame frame) {
  validate(frame);
  auto it = frames_.find(frame.frame_id);
  if (it != frames_.end()) {
    if (!(it->second == frame)) {
      throw std::invalid_argument("kitti eval: frame " + std::to_string(frame.frame_id) +
                                  " was added twice with different objects");
    }
    return;
  }
  const std::int64_t id = frame.frame_id;
  frames_.emplace(id, std::move(frame));
}

void KittiEvalFrames::merge(const KittiEvalFrames& other) {
  for (const auto& [id, frame] : other.frames_) add(frame);
}

std::string KittiEvalFrames::serialize() const {
  Writer w;
  w.put_bytes(kMagic);
  w.put<std::uint64_t>(frames_.size());
  for (const auto& [id, frame] : frames_) {
    w.put<std::int64_t>(id);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(frame.ground_truth.size()));
    w.put<std::uint32_t>(static_cast<std::uint32_t>(frame.detections.size()));
    for (const auto& o : frame.ground_truth) write_object(w, o);
    for (const auto& o : frame.detections) write_object(w, o);
  }
  return w.take();
}

KittiEvalFrames KittiEvalFrames::deserialize(std::string_view bytes) {
  Reader r(bytes);
  if (r.get_bytes(kMagic.size(), "magic") != kMagic) {
    throw std::invalid_argument("kitti eval shard: bad magic (expected DDP3DKE1)");
  }
  KittiEvalFrames out;
  const auto count = r.get<std::uint64_t>("frame count");
  for (std::uint64_t f = 0; f < count; ++f) {
    EvalFrame frame;
    frame.frame_id = r.get<std::int64_t>("frame id");
    const auto n_gt = r.get<std::uint32_t>("ground-truth count");
    const auto n_det = r.get<std::uint32_t>("detection count");
    for (std::uint32_t i = 0; i < n_gt; ++i) frame.ground_truth.push_back(read_object(r));
    for (std::uint32_t i = 0; i < n_det; ++i) frame.detections.push_back(read_object(r));
    out.add(std::move(frame));
  }
  if (!r.done()) {
    throw std::invalid_argument("kitti eval shard: " + std::to_string(bytes.size() - r.pos()) +
                                " trailing bytes after the last frame");
  }
  return out;
}

KittiEvalFrames merge_serialized_shards(const std::vector<std::string>& shards) {
  KittiEvalFrames merged;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    try {
      merged.merge(KittiEvalFrames::deserialize(shards[i]));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("shard " + std::to_string(i) + ": " + e.what());
    }
  }
  return merged;
}

}  // namespace ddp3d::eval
