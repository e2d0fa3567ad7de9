// Writes TensorBoard event files (what tf.summary and torch.utils.tensorboard write): a new
// events.out.tfevents.<seconds>.<host>.<pid>.<n> in `log_dir` per writer (<seconds> moved past
// the newest existing file's, so the new file sorts last), starting with the file_version event,
// then scalar and image summaries and session starts, each record written and flushed before the
// call returns, so a crash loses nothing already logged. Failing writes (a full disk, a removed
// directory) are reported to `warn` once per failing streak and never thrown: training must not
// stop because its charts cannot be written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddp3d::visual {

// Height, width and TensorBoard colorspace (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA) from a PNG's
// IHDR chunk. Throws std::invalid_argument when `png` is not a PNG with a valid header.
struct PngHeader {
  std::int32_t height = 0;
  std::int32_t width = 0;
  std::int32_t colorspace = 0;
};
PngHeader read_png_header(std::string_view png);

class TensorboardEventWriter {
 public:
  using Warn = std::function<void(const std::string&)>;
  // Creates `log_dir` and the file; throws std::runtime_error when neither can be created.
  TensorboardEventWriter(const std::filesystem::path& log_dir, Warn warn);
  const std::filesystem::path& file() const { return path_; }

  // One event at `step` with a simple_value per (tag, value), as float like TensorBoard keeps.
  void add_scalars(const std::vector<std::pair<std::string, double>>& scalars, std::int64_t step);
  // `png`: the encoded picture (read_png_header's checks apply: throws on a non-PNG).
  void add_image(const std::string& tag, std::int64_t step, std::string_view png);
  // SessionLog START at `step`: TensorBoard's reader drops the events of earlier files at this
  // step and later, so a resumed run's history replaces what the interrupted run logged past
  // its checkpoint, as TensorFlow's own restarts do.
  void add_session_start(std::int64_t step);

 private:
  void write_event(const std::string& serialized_event);
  std::filesystem::path path_;
  Warn warn_;
  bool failing_ = false;
};

}  // namespace ddp3d::visual
