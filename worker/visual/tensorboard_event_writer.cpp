#include "worker/visual/tensorboard_event_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "worker/visual/tensorboard_event.pb.h"
#include "worker/visual/tfrecord.h"

namespace ddp3d::visual {
namespace {

namespace pb = ddp3d::tensorboard;

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

std::uint32_t read_be32(std::string_view bytes) {
  std::uint32_t v = 0;
  for (const char c : bytes) v = (v << 8) | static_cast<unsigned char>(c);
  return v;
}

pb::Event event_at(std::int64_t step) {
  pb::Event event;
  event.set_wall_time(wall_time());
  event.set_step(step);
  return event;
}

// TensorBoard reads a directory's event files in name order, and a session start drops the
// steps of the files read before it: a new file must sort after every existing one, also when
// a run restarts within the second its predecessor started (names differing only in the pid
// would sort by its digits). One more than the newest <secs> among existing files, else 0.
long long after_newest(const std::filesystem::path& log_dir) {
  static constexpr std::string_view kPrefix = "events.out.tfevents.";
  long long newest = -1;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(log_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kPrefix, 0) != 0) continue;
    const std::size_t end_of_secs = name.find('.', kPrefix.size());
    const std::string secs = name.substr(kPrefix.size(), end_of_secs - kPrefix.size());
    if (secs.empty() || secs.size() > 12 ||
        secs.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    newest = std::max(newest, std::stoll(secs));
  }
  return newest + 1;
}

}  // namespace

PngHeader read_png_header(std::string_view png) {
  static constexpr std::string_view kSignature("\x89PNG\r\n\x1a\n", 8);
  // Signature, then the IHDR chunk: length 13, "IHDR", width, height, bit depth, colour type.
  if (png.size() < 33 || png.substr(0, 8) != kSignature || png.substr(12, 4) != "IHDR") {
    throw std::invalid_argument("not a PNG (no PNG signature and IHDR chunk)");
  }
  const std::uint32_t width = read_be32(png.substr(16, 4));
  const std::uint32_t height = read_be32(png.substr(20, 4));
  if (width == 0 || height == 0 || width > 0x7FFFFFFFU || height > 0x7FFFFFFFU) {
    throw std::invalid_argument("PNG with an invalid size " + std::to_string(width) + "x" +
                                std::to_string(height));
  }
  PngHeader header;
  header.width = static_cast<std::int32_t>(width);
  header.height = static_cast<std::int32_t>(height);
  switch (static_cast<unsigned char>(png[25])) {
    case 0:
      header.colorspace = 1;
      break;  // grey
    case 4:
      header.colorspace = 2;
      break;  // grey + alpha
    case 2:   // RGB
    case 3:
      header.colorspace = 3;
      break;  // palette, decoded to RGB
    case 6:
      header.colorspace = 4;
      break;  // RGBA
    default:
      throw std::invalid_argument("PNG with an unknown colour type " +
                                  std::to_string(static_cast<unsigned char>(png[25])));
  }
  return header;
}

TensorboardEventWriter::TensorboardEventWriter(const std::filesystem::path& log_dir, Warn warn)
    : warn_(std::move(warn)) {
  // <n> keeps two writers of one process apart within the same second.
  static std::atomic<int> counter{0};
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  const long long seconds = std::max(static_cast<long long>(wall_time()), after_newest(log_dir));
  path_ = log_dir / ("events.out.tfevents." + std::to_string(seconds) + "." + host_name() + "." +
                     std::to_string(getpid()) + "." + std::to_string(counter++));
  {
    const std::ofstream probe(path_, std::ios::binary | std::ios::app);
    if (!probe) {
      throw std::runtime_error("cannot write the TensorBoard event file " + path_.string() +
                               (ec ? " (" + ec.message() + ")" : std::string()));
    }
  }
  pb::Event event = event_at(0);
  event.set_file_version("brain.Event:2");
  write_event(event.SerializeAsString());
}

void TensorboardEventWriter::add_scalars(const std::vector<std::pair<std::string, double>>& scalars,
                                         std::int64_t step) {
  pb::Event event = event_at(step);
  for (const auto& [tag, value] : scalars) {
    pb::Summary::Value* v = event.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
  }
  write_event(event.SerializeAsString());
}

void TensorboardEventWriter::add_image(const std::string& tag, std::int64_t step,
                                       std::string_view png) {
  const PngHeader header = read_png_header(png);
  pb::Event event = event_at(step);
  pb::Summary::Value* v = event.mutable_summary()->add_value();
  v->set_tag(tag);
  pb::Summary::Image* image = v->mutable_image();
  image->set_height(header.height);
  image->set_width(header.width);
  image->set_colorspace(header.colorspace);
  image->set_encoded_image_string(std::string(png));
  write_event(event.SerializeAsString());
}

void TensorboardEventWriter::add_session_start(std::int64_t step) {
  pb::Event event = event_at(step);
  event.mutable_session_log()->set_status(pb::SessionLog::START);
  write_event(event.SerializeAsString());
}

void TensorboardEventWriter::write_event(const std::string& serialized_event) {
  // Opened per record (a few per logging interval): each record reaches the file as a whole
  // before the next, and a file removed or a disk freed meanwhile is written again.
  std::error_code size_error;
  const std::uintmax_t size_before = std::filesystem::file_size(path_, size_error);
  std::ofstream out(path_, std::ios::binary | std::ios::app);
  out << frame_tfrecord(serialized_event);
  out.flush();
  if (!out.good()) {
    out.close();
    // A record written in part (the disk filled mid-record) would end the file for every
    // reader, later records included: cut it off.
    if (!size_error) std::filesystem::resize_file(path_, size_before, size_error);
    if (!failing_ && warn_) {
      warn_("cannot write to the TensorBoard event file " + path_.string() +
            "; its charts miss this record (training continues)");
    }
    failing_ = true;
  } else {
    failing_ = false;
  }
}

}  // namespace ddp3d::visual
