#include <gtest/gtest.h>
#include <stdlib.h>

#include "operator/kube/config.h"
#include "operator/kube/errors.h"
#include "temp_dir.h"

namespace ddp3d::kube {
namespace {

using testing::TempDir;

struct ServiceEnv {
  ServiceEnv(const char* host, const char* port) {
    ::setenv("KUBERNETES_SERVICE_HOST", host, 1);
    ::setenv("KUBERNETES_SERVICE_PORT", port, 1);
  }
  ~ServiceEnv() {
    ::unsetenv("KUBERNETES_SERVICE_HOST");
    ::unsetenv("KUBERNETES_SERVICE_PORT");
  }
};

const char* kCa = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

TEST(InClusterConfig, ReadsServiceAccountVolumeAndEnvironment) {
  TempDir sa;
  sa.write("token", "tok\n");
  sa.write("ca.crt", kCa);
  sa.write("namespace", "ml-jobs");
  ServiceEnv env("10.96.0.1", "443");
  const Config c = in_cluster_config(sa.path());
  EXPECT_EQ(c.server, "https://10.96.0.1:443");
  EXPECT_EQ(c.bearer_token_file, sa.path() / "token");
  EXPECT_EQ(c.ca_pem, kCa);
  EXPECT_EQ(c.default_namespace, "ml-jobs");
}

TEST(InClusterConfig, BracketsIpv6Hosts) {
  TempDir sa;
  sa.write("token", "tok");
  sa.write("ca.crt", kCa);
  ServiceEnv env("fd00::1", "443");
  EXPECT_EQ(in_cluster_config(sa.path()).server, "https://[fd00::1]:443");
}

TEST(InClusterConfig, ClearErrorsOutsideAPod) {
  TempDir sa;
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  try {
    in_cluster_config(sa.path());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  }
  ServiceEnv env("10.0.0.1", "443");
  try {
    in_cluster_config(sa.path());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find((sa.path() / "token").string()), std::string::npos);
  }
  sa.write("token", "t");
  sa.write("ca.crt", "not a certificate");
  try {
    in_cluster_config(sa.path());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ca.crt"), std::string::npos);
  }
}

}  // namespace
}  // namespace ddp3d::kube
