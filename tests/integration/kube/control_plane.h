// The real etcd + kube-apiserver of tests/testbin/control-plane.sh, started once for the whole
// test binary (a gtest Environment) in a temporary folder.
#pragma once

#include <filesystem>
#include <string>

#include "operator/kube/config.h"

namespace ddp3d::kube::testing {

class ControlPlane {
 public:
  // The running instance (started by the environment registered in control_plane.cpp).
  static ControlPlane& get();

  void start();
  void stop();
  void stop_apiserver();
  void start_apiserver();
  // A namespace with its "default" ServiceAccount (needed to create pods).
  void create_namespace(const std::string& ns);
  // A kubeconfig that authenticates with the token of ServiceAccount `sa` in `ns`.
  std::filesystem::path sa_kubeconfig(const std::string& ns, const std::string& sa);

  // Runs kubectl as the admin (e.g. "apply -f crds/"); throws when it fails.
  void kubectl(const std::string& args);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path kubeconfig() const { return dir_ / "kubeconfig"; }
  Config config() const { return load_kubeconfig(kubeconfig()); }

 private:
  void script(const std::string& args);
  std::filesystem::path dir_;
  bool running_ = false;
};

// A fresh namespace name for one test ("kt-<suffix>-<n>").
std::string unique_namespace(const std::string& suffix);

}  // namespace ddp3d::kube::testing
