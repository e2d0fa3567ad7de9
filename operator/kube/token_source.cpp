#include "operator/kube/token_source.h"

#include <utility>

#include "common/io/regular_file.h"
#include "operator/kube/errors.h"
#include "operator/kube/exec_credential.h"

namespace ddp3d::kube {

namespace {
// Service-account tokens are ~1 KB; the bound keeps a wrong path from filling memory.
constexpr std::uint64_t kMaxTokenBytes = 1 * io::kMiB;

std::string trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(s.find_last_not_of(ws) + 1);  // npos + 1 == 0: all blank
  s.erase(0, s.find_first_not_of(ws));
  return s;
}
}  // namespace

TokenSource::TokenSource(std::string static_token, std::filesystem::path file)
    : static_token_(trim(std::move(static_token))), file_(std::move(file)) {}

TokenSource::TokenSource(std::unique_ptr<ExecCredentialSource> exec) : exec_(std::move(exec)) {}

TokenSource::~TokenSource() = default;

bool TokenSource::invalidate() {
  if (!exec_) return false;
  exec_->invalidate();
  return true;
}

void TokenSource::cancel() {
  if (exec_) exec_->cancel();
}

std::string TokenSource::token() {
  if (exec_) return trim(exec_->token());
  if (file_.empty()) return static_token_;
  std::lock_guard lock(mu_);
  std::error_code ec;
  // Projected tokens are swapped atomically through a symlink, so stat() follows it.
  const auto mtime = std::filesystem::last_write_time(file_, ec);
  const auto size = ec ? 0 : std::filesystem::file_size(file_, ec);
  if (ec) {
    if (loaded_) return cached_;  // keep using the last token through a brief swap
    throw ConfigError("bearer token file " + file_.string() + ": " + ec.message());
  }
  if (loaded_ && mtime == mtime_ && size == size_) return cached_;
  std::string text;
  try {
    text = io::read_regular_file(file_, kMaxTokenBytes, "bearer token file");
  } catch (const io::FileError& e) {
    if (loaded_) return cached_;
    throw ConfigError(e.what());
  }
  cached_ = trim(std::move(text));
  mtime_ = mtime;
  size_ = size;
  loaded_ = true;
  return cached_;
}

}  // namespace ddp3d::kube
