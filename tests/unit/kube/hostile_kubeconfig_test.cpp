// Kubeconfigs, CA files and token files that are FIFOs, directories, devices or huge sparse
// files, and YAML alias bombs: each is a ConfigError naming the file, without blocking.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "operator/kube/config.h"
#include "operator/kube/errors.h"
#include "operator/kube/token_source.h"
#include "tests/unit/common/hostile_files.h"

namespace ddp3d::kube {
namespace {

using ddp3d::testing::message_within;
using ddp3d::testing::ScratchDir;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string kubeconfig_with_ca_file(const std::string& ca) {
  return "current-context: c\n"
         "clusters: [{name: k, cluster: {server: \"https://h:6443\", certificate-authority: " +
         ca +
         "}}]\n"
         "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
         "users: [{name: u, user: {token: t}}]\n";
}

TEST(HostileKubeconfig, TheKubeconfigItselfMustBeABoundedRegularFile) {
  ScratchDir dir;
  const auto fifo = dir.fifo("config");
  const std::string m = message_within([&] { load_kubeconfig(fifo); }, fifo);
  EXPECT_TRUE(contains(m, "kubeconfig " + fifo.string() + ": kubeconfig is a FIFO")) << m;
  EXPECT_TRUE(contains(error_of([] { load_kubeconfig("/dev/zero"); }), "character device"));
  EXPECT_TRUE(contains(error_of([&] { load_kubeconfig(dir.root()); }), "is a directory"));
  const auto sparse = dir.sparse("huge", std::uint64_t{1} << 36);
  EXPECT_TRUE(contains(error_of([&] { load_kubeconfig(sparse); }), "over the limit"));
}

TEST(HostileKubeconfig, ACaFileThatIsAFifoOrDeviceNamesTheKey) {
  ScratchDir dir;
  const auto fifo = dir.fifo("ca.crt");
  const auto config = dir.write("config", kubeconfig_with_ca_file("ca.crt"));
  const std::string m = message_within([&] { load_kubeconfig(config); }, fifo);
  EXPECT_TRUE(contains(m, "clusters[name=k].cluster.certificate-authority: cannot read")) << m;
  EXPECT_TRUE(contains(m, "PEM file is a FIFO")) << m;
  const auto dev = dir.write("dev", kubeconfig_with_ca_file("/dev/zero"));
  EXPECT_TRUE(contains(error_of([&] { load_kubeconfig(dev); }), "/dev/zero: PEM file is a"));
}

TEST(HostileKubeconfig, AnAliasBombIsReadWithoutExpanding) {
  std::string bomb = "a0: &a0 [x]\n";
  for (int i = 1; i <= 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  bomb += "current-context: *a9\nclusters: *a9\ncontexts: *a9\n";
  const auto start = std::chrono::steady_clock::now();
  const std::string m = error_of([&] { parse_kubeconfig(bomb, "/k/config"); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_TRUE(contains(m, "kubeconfig /k/config")) << m;
}

TEST(HostileKubeconfig, ASelfReferencingContextListIsAnError) {
  const std::string m =
      error_of([] { parse_kubeconfig("current-context: c\ncontexts: &l [*l]\n", "/k/config"); });
  EXPECT_TRUE(contains(m, "kubeconfig /k/config")) << m;
}

TEST(HostileKubeconfig, ATokenFileThatIsAFifoIsAnError) {
  ScratchDir dir;
  const auto fifo = dir.fifo("token");
  TokenSource source("", fifo);
  const std::string m = message_within([&] { source.token(); }, fifo);
  EXPECT_TRUE(contains(m, "bearer token file " + fifo.string()) ||
              contains(m, fifo.string() + ": bearer token file is a FIFO"))
      << m;
}

}  // namespace
}  // namespace ddp3d::kube
