#include "control_plane.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>

namespace ddp3d::kube::testing {
namespace {

std::filesystem::path source_dir() {
  const char* s = std::getenv("DDP3D_SOURCE_DIR");
  if (!s || !*s) throw std::runtime_error("DDP3D_SOURCE_DIR is not set (run through ctest)");
  return s;
}

class ControlPlaneEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ControlPlane::get().start(); }
  void TearDown() override { ControlPlane::get().stop(); }
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new ControlPlaneEnvironment);

}  // namespace

ControlPlane& ControlPlane::get() {
  static ControlPlane instance;
  return instance;
}

void ControlPlane::script(const std::string& args) {
  const std::string cmd = "bash '" + (source_dir() / "tests/testbin/control-plane.sh").string() +
                          "' " + args + " >>'" + (dir_ / "harness.log").string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0)
    throw std::runtime_error("control-plane.sh " + args + " failed; see " +
                             (dir_ / "harness.log").string());
}

void ControlPlane::start() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "ddp3d-kube-it-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  // The script's watchdog stops the servers if this process dies without TearDown.
  ::setenv("CONTROL_PLANE_OWNER_PID", std::to_string(::getpid()).c_str(), 1);
  script("start '" + dir_.string() + "'");
  running_ = true;
}

void ControlPlane::stop() {
  if (!running_) return;
  running_ = false;
  script("stop '" + dir_.string() + "'");
  std::error_code ec;
  if (!::testing::UnitTest::GetInstance()->Failed()) std::filesystem::remove_all(dir_, ec);
}

void ControlPlane::stop_apiserver() {
  script("stop-apiserver '" + dir_.string() + "'");
}
void ControlPlane::start_apiserver() {
  script("start-apiserver '" + dir_.string() + "'");
}

void ControlPlane::create_namespace(const std::string& ns) {
  script("create-namespace '" + dir_.string() + "' " + ns);
}

std::filesystem::path ControlPlane::sa_kubeconfig(const std::string& ns, const std::string& sa) {
  const auto out = dir_ / ("sa-" + ns + "-" + sa + ".kubeconfig");
  script("sa-kubeconfig '" + dir_.string() + "' " + ns + " " + sa + " '" + out.string() + "'");
  return out;
}

void ControlPlane::kubectl(const std::string& args) {
  const std::string cmd = "cd '" + source_dir().string() + "' && KUBECACHEDIR='" +
                          (dir_ / "kube-cache").string() + "' kubectl --kubeconfig '" +
                          kubeconfig().string() + "' " + args + " >>'" +
                          (dir_ / "harness.log").string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0)
    throw std::runtime_error("kubectl " + args + " failed; see " + (dir_ / "harness.log").string());
}

std::string unique_namespace(const std::string& suffix) {
  static std::atomic<int> n{0};
  return "kt-" + suffix + "-" + std::to_string(++n);
}

}  // namespace ddp3d::kube::testing
