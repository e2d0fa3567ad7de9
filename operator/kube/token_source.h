// The bearer token for requests. A projected service-account token is rotated by the kubelet
// (about hourly), so a token file is re-read whenever its modification time or size changes.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

namespace ddp3d::kube {

class ExecCredentialSource;

class TokenSource {
 public:
  // `file` empty = always return `static_token`.
  TokenSource(std::string static_token, std::filesystem::path file);
  // From a kubeconfig exec credential plugin (wins over the other two).
  explicit TokenSource(std::unique_ptr<ExecCredentialSource> exec);
  ~TokenSource();

  // The current token (surrounding whitespace removed); empty when there is none. Throws
  // ConfigError if the file cannot be read and no token was read from it before.
  std::string token();
  // The API server refused the token (401): drops an exec plugin's cached token so the next
  // token() asks the plugin again. Returns whether that happened (a retry can help); static
  // tokens and token files are re-read on change anyway, so for them it returns false.
  bool invalidate();
  // The client is shut off: an exec plugin running now is killed and none runs again (its
  // token() throws). Without a plugin, nothing to do.
  void cancel();

 private:
  std::mutex mu_;
  std::unique_ptr<ExecCredentialSource> exec_;
  std::string static_token_;
  std::filesystem::path file_;
  std::string cached_;
  std::filesystem::file_time_type mtime_{};
  std::uintmax_t size_ = 0;
  bool loaded_ = false;
};

}  // namespace ddp3d::kube
