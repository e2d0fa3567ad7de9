// ddp3d gloo_compat: see ../../README.md. The abstract key-value store interface that
// ProcessGroupGloo::GlooStore derives from. Only its declaration is needed here: ddp3d
// never instantiates GlooStore, libtorch_cpu does (with its own, complete gloo).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace gloo::rendezvous {

class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::vector<char>& data) = 0;
  virtual std::vector<char> get(const std::string& key) = 0;
  virtual void wait(const std::vector<std::string>& keys) = 0;
  virtual void wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) = 0;
};

}  // namespace gloo::rendezvous
