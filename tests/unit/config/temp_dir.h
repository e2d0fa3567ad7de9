// A scratch folder for config files, removed when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "worker/config/config.h"

namespace ddp3d::config::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ddp3d-config-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `relative` (folders created) and returns its full path.
  std::filesystem::path write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path p = root_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
  std::string path(const std::string& relative) const { return (root_ / relative).string(); }

 private:
  std::filesystem::path root_;
};

// The message of the ConfigError that `f` throws; fails the test when it throws nothing.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

// A valid minimal config (the toy model), to which tests add or break keys.
inline const char* kToyConfig =
    "model: {type: ToyRegressor, in_features: 4}\n"
    "train_dataloader:\n"
    "  batch_size: 8\n"
    "  dataset: {type: SyntheticRegression, num_samples: 64}\n"
    "optim_wrapper:\n"
    "  optimizer: {type: SGD, lr: 0.1}\n"
    "train_cfg: {max_epochs: 2}\n";

}  // namespace ddp3d::config::testing
