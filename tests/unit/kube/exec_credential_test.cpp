// Exec credential plugins: what they print is checked, and real plugin scripts are run with
// the environment client-go gives them, cached until their token expires.
#include "operator/kube/exec_credential.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include "operator/kube/client.h"
#include "operator/kube/errors.h"
#include "operator/kube/resource.h"
#include "temp_dir.h"

namespace ddp3d::kube {
namespace {

using testing::TempDir;

ExecPlugin plugin(const std::string& command = "get-token") {
  ExecPlugin p;
  p.api_version = "client.authentication.k8s.io/v1";
  p.command = command;
  return p;
}

std::string credential(const std::string& status) {
  return R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
             "status": )" +
         status + "}";
}

void expect_error(const std::string& text, const std::string& want) {
  try {
    parse_exec_credential(text, plugin());
    FAIL() << "no error for " << text;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'get-token'"), std::string::npos) << e.what();
  }
}

TEST(ExecCredential, TokenAndExpiryAreRead) {
  const auto c = parse_exec_credential(credential(R"({"token": "abc", "expirationTimestamp":
                                            "2026-11-30T10:00:00Z"})"),
                                       plugin());
  EXPECT_EQ(c.token, "abc");
  ASSERT_TRUE(c.expires.has_value());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(c.expires->time_since_epoch()).count(),
            1796032800);
  EXPECT_FALSE(parse_exec_credential(credential(R"({"token": "abc"})"), plugin()).expires);
}

TEST(ExecCredential, WhatIsWrongIsNamed) {
  expect_error("token: abc", "did not print JSON");
  expect_error(R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "Secret"})",
               "other than an ExecCredential");
  expect_error(R"({"apiVersion": "client.authentication.k8s.io/v1beta1",
                   "kind": "ExecCredential", "status": {"token": "t"}})",
               "answered apiVersion 'client.authentication.k8s.io/v1beta1'");
  expect_error(credential("{}"), "no status.token");
  expect_error(credential(R"({"clientCertificateData": "x", "clientKeyData": "y"})"),
               "client certificate; only status.token");
  expect_error(credential(R"({"token": "t", "expirationTimestamp": "soon"})"),
               "status.expirationTimestamp");
}

TEST(ExecCredential, ExecInfoCarriesTheClusterOnlyWhenAsked) {
  auto p = plugin();
  const std::string bare = exec_info_json(p, "https://h:6443", "PEM");
  EXPECT_NE(bare.find(R"("interactive":false)"), std::string::npos) << bare;
  EXPECT_EQ(bare.find("cluster"), std::string::npos) << bare;
  p.provide_cluster_info = true;
  const std::string full = exec_info_json(p, "https://h:6443", "PEM");
  EXPECT_NE(full.find(R"("server":"https://h:6443")"), std::string::npos) << full;
  EXPECT_NE(full.find(R"("certificate-authority-data":"UEVN")"), std::string::npos) << full;
}

// A plugin script that counts its runs in `count` and prints a token that expires in
// `expires_in` seconds (negative: already expired).
std::string counting_plugin(const TempDir& dir, int expires_in) {
  const auto count = dir.path() / "count";
  const auto script = dir.write("plugin.sh", "#!/bin/sh\necho run >> '" + count.string() +
                                                 "'\nexp=$(date -u -d \"@$(( $(date +%s) + " +
                                                 std::to_string(expires_in) +
                                                 " ))\" +%Y-%m-%dT%H:%M:%SZ)\n"
                                                 "printf '{\"apiVersion\": "
                                                 "\"client.authentication.k8s.io/v1\", \"kind\": "
                                                 "\"ExecCredential\", \"status\": {\"token\": "
                                                 "\"tok-%s\", \"expirationTimestamp\": \"%s\"}}' "
                                                 "\"$(wc -l < '" +
                                                 count.string() + "' | tr -d ' ')\" \"$exp\"\n");
  chmod(script.c_str(), 0755);
  return script.string();
}

int runs(const TempDir& dir) {
  std::ifstream in(dir.path() / "count");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(ExecCredentialSource, ATokenIsReusedUntilShortlyBeforeItExpires) {
  TempDir dir;
  ExecCredentialSource fresh(plugin(counting_plugin(dir, 3600)), "https://h", "");
  EXPECT_EQ(fresh.token(), "tok-1");
  EXPECT_EQ(fresh.token(), "tok-1");
  EXPECT_EQ(runs(dir), 1);

  TempDir dir2;
  // Expiring in 5 s is within the 10 s margin: every call asks the plugin again.
  ExecCredentialSource expiring(plugin(counting_plugin(dir2, 5)), "https://h", "");
  EXPECT_EQ(expiring.token(), "tok-1");
  EXPECT_EQ(expiring.token(), "tok-2");
  EXPECT_EQ(runs(dir2), 2);
}

TEST(ExecCredentialSource, ThePluginGetsItsEnvAndExecInfo) {
  TempDir dir;
  const auto info = dir.path() / "info.json";
  const auto script = dir.write(
      "plugin.sh", "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > '" + info.string() +
                       "'\nprintf '{\"apiVersion\": \"client.authentication.k8s.io/v1\", "
                       "\"kind\": \"ExecCredential\", \"status\": {\"token\": \"%s-%s\"}}' "
                       "\"$PROFILE_NAME\" \"$1\"\n");
  chmod(script.c_str(), 0755);
  auto p = plugin(script.string());
  p.args = {"prod"};
  p.env = {{"PROFILE_NAME", "ml"}};
  p.provide_cluster_info = true;
  ExecCredentialSource source(p, "https://h:6443", "");
  EXPECT_EQ(source.token(), "ml-prod");
  std::ifstream in(info);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find(R"("kind":"ExecCredential")"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(R"("server":"https://h:6443")"), std::string::npos) << text.str();
}

TEST(ExecCredentialSource, AFailingPluginIsAnErrorWithItsStderr) {
  TempDir dir;
  const auto script =
      dir.write("plugin.sh", "#!/bin/sh\necho 'token expired, run sso login' >&2\nexit 3\n");
  chmod(script.c_str(), 0755);
  ExecCredentialSource failing(plugin(script.string()), "https://h", "");
  try {
    failing.token();
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("exited with code 3: token expired, run sso login"),
              std::string::npos)
        << e.what();
  }
  ExecCredentialSource missing(plugin("/nonexistent/get-token"), "https://h", "");
  try {
    missing.token();
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("exited with code 127: cannot execute /nonexistent/get-token"),
        std::string::npos)
        << e.what();
  }
}

// --- plugins that misbehave: none of them may hold up the caller past its limits -----------

constexpr const char* kGoodCredential =
    R"({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", )"
    R"("status": {"token": "good"}})";

std::string script(const TempDir& dir, const std::string& body) {
  const auto path = dir.write("plugin.sh", "#!/bin/sh\n" + body);
  chmod(path.c_str(), 0755);
  return path.string();
}

int read_pid(const std::filesystem::path& file) {
  std::ifstream in(file);
  int pid = 0;
  in >> pid;
  return pid;
}

// Whether `pid` is a live process (a zombie awaiting its reaper counts as gone).
bool alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Polls `pid` until it is gone or `timeout` passes (a kill is delivered asynchronously).
bool gone_within(int pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (alive(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string error_of(ExecCredentialSource& source) {
  try {
    source.token();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

using Seconds = std::chrono::duration<double>;

TEST(ExecCredentialSource, APluginPastItsDeadlineIsKilledWithItsGroup) {
  TempDir dir;
  const auto pids = dir.path() / "pids";
  // It closes its output and keeps running, with a child of its own.
  const auto cmd = script(dir, "sleep 60 & echo $! > '" + pids.string() + ".child'\necho $$ > '" +
                                   pids.string() + "'\nexec >&- 2>&-\nsleep 60\n");
  ExecCredentialSource source(plugin(cmd), "https://h", "", {std::chrono::milliseconds(400)});
  const auto t0 = std::chrono::steady_clock::now();
  const std::string error = error_of(source);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(error.find("'" + cmd + "' did not finish within 400 ms"), std::string::npos) << error;
  EXPECT_NE(error.find("process group was killed"), std::string::npos) << error;
  EXPECT_GE(took, std::chrono::milliseconds(400));
  EXPECT_LT(took, std::chrono::seconds(5)) << Seconds(took).count();
  EXPECT_TRUE(gone_within(read_pid(pids), std::chrono::seconds(5)));
  EXPECT_TRUE(gone_within(read_pid(pids.string() + ".child"), std::chrono::seconds(5)));
}

TEST(ExecCredentialSource, AChildHoldingThePipeDoesNotHoldTheToken) {
  TempDir dir;
  const auto child = dir.path() / "child";
  // The plugin prints its credential and exits; the child it leaves behind keeps stdout open.
  const auto cmd = script(dir, "sleep 60 & echo $! > '" + child.string() + "'\nprintf '%s' '" +
                                   kGoodCredential + "'\n");
  ExecCredentialSource source(plugin(cmd), "https://h", "", {std::chrono::seconds(30)});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(source.token(), "good");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_TRUE(gone_within(read_pid(child), std::chrono::seconds(5))) << "the leftover is killed";
}

TEST(ExecCredentialSource, OutputPastTheCapIsAnErrorNamingThePlugin) {
  TempDir dir;
  const auto pid = dir.path() / "pid";
  const auto cmd = script(dir, "echo $$ > '" + pid.string() + "'\nexec yes\n");
  ExecLimits limits;
  limits.max_output_bytes = 64 * 1024;
  ExecCredentialSource source(plugin(cmd), "https://h", "", limits);
  const std::string error = error_of(source);
  EXPECT_NE(error.find("'" + cmd + "' printed more than 65536 bytes"), std::string::npos) << error;
  EXPECT_TRUE(gone_within(read_pid(pid), std::chrono::seconds(5)));
}

// A plugin that records its pid and then hangs (as one waiting on an SSO prompt would).
std::string hanging_plugin(const TempDir& dir, const std::filesystem::path& pid) {
  return script(dir, "echo $$ > '" + pid.string() + ".tmp'; mv '" + pid.string() + ".tmp' '" +
                         pid.string() + "'\nexec sleep 60\n");
}

int wait_for_pid(const std::filesystem::path& file) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (const int pid = read_pid(file); pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return 0;
}

TEST(ExecCredentialSource, CancelKillsARunningPluginAndRunsNoOther) {
  TempDir dir;
  const auto pid_file = dir.path() / "pid";
  const auto cmd = hanging_plugin(dir, pid_file);
  ExecCredentialSource source(plugin(cmd), "https://h", "", {std::chrono::seconds(30)});
  auto error = std::async(std::launch::async, [&] { return error_of(source); });
  const int pid = wait_for_pid(pid_file);
  ASSERT_GT(pid, 0) << "the plugin did not start";
  const auto t0 = std::chrono::steady_clock::now();
  source.cancel();
  ASSERT_EQ(error.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  const std::string e = error.get();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_NE(e.find("'" + cmd + "' was stopped, the client was shut off"), std::string::npos) << e;
  EXPECT_TRUE(gone_within(pid, std::chrono::seconds(1)));
  // For good: the next token() does not run the plugin.
  std::filesystem::remove(pid_file);
  EXPECT_NE(error_of(source).find("not run, the client was shut off"), std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(std::filesystem::exists(pid_file));
}

TEST(ClientAbort, KillsAnExecPluginARequestIsWaitingFor) {
  TempDir dir;
  const auto pid_file = dir.path() / "pid";
  const auto cmd = hanging_plugin(dir, pid_file);
  Config config;
  config.server = "https://127.0.0.1:1";  // never reached: the request waits for its token
  config.origin = "test";
  config.exec = plugin(cmd);
  Client client(config);
  auto error = std::async(std::launch::async, [&]() -> std::string {
    try {
      client.get(resources::pods(), "ns", "p");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  });
  const int pid = wait_for_pid(pid_file);
  ASSERT_GT(pid, 0) << "the plugin did not start";
  const auto t0 = std::chrono::steady_clock::now();
  client.abort("shutting down");
  ASSERT_EQ(error.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  const std::string e = error.get();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  EXPECT_NE(e.find("'" + cmd + "' was stopped"), std::string::npos) << e;
  EXPECT_TRUE(gone_within(pid, std::chrono::seconds(1)));
  try {
    client.get(resources::pods(), "ns", "p");
    FAIL() << "a request after abort() was sent";
  } catch (const TransportError& te) {
    EXPECT_NE(std::string(te.what()).find("shut off (shutting down)"), std::string::npos)
        << te.what();
  }
}

TEST(ExecCredentialSource, KubeconfigEnvOverridesTheInheritedOne) {
  TempDir dir;
  ::setenv("DDP3D_PLUGIN_PROFILE", "inherited", 1);
  ::setenv("DDP3D_PLUGIN_OTHER", "kept", 1);
  // The plugin's raw environment (/proc/$$/environ, as exec'd, before the shell dedupes it):
  // the name must occur once, with the kubeconfig's value; a program that takes the first
  // of two entries (getenv, Go) would otherwise see the inherited one.
  const auto cmd = script(dir, R"(env_of() { tr '\0' '\n' < /proc/$$/environ | grep "^$1="; }
n=$(env_of DDP3D_PLUGIN_PROFILE | wc -l | tr -d ' ')
v=$(env_of DDP3D_PLUGIN_PROFILE | head -1 | cut -d= -f2)
printf '{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": "%s-%s-%s"}}' "$n" "$v" "$DDP3D_PLUGIN_OTHER"
)");
  auto p = plugin(cmd);
  p.env = {{"DDP3D_PLUGIN_PROFILE", "from-kubeconfig"}};
  ExecCredentialSource source(p, "https://h", "");
  EXPECT_EQ(source.token(), "1-from-kubeconfig-kept");
  ::unsetenv("DDP3D_PLUGIN_PROFILE");
  ::unsetenv("DDP3D_PLUGIN_OTHER");
}

TEST(ExecCredentialSource, InvalidateRunsThePluginAgain) {
  TempDir dir;
  ExecCredentialSource source(plugin(counting_plugin(dir, 3600)), "https://h", "");
  EXPECT_EQ(source.token(), "tok-1");
  EXPECT_EQ(source.token(), "tok-1");
  source.invalidate();
  EXPECT_EQ(source.token(), "tok-2");
  EXPECT_EQ(runs(dir), 2);
}

}  // namespace
}  // namespace ddp3d::kube
