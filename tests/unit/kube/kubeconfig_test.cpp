// Kubeconfig parsing from temp files: tokens, inline base64 certificates, file references
// relative to the kubeconfig, and errors that name the file and the key.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "operator/kube/config.h"
#include "operator/kube/errors.h"
#include "temp_dir.h"

namespace ddp3d::kube {
namespace {

using testing::TempDir;

const char* kCaPem = "-----BEGIN CERTIFICATE-----\nMIIBfakeCA\n-----END CERTIFICATE-----\n";
const char* kCertPem = "-----BEGIN CERTIFICATE-----\nMIIBfakeCERT\n-----END CERTIFICATE-----\n";
const char* kKeyPem = "-----BEGIN PRIVATE KEY-----\nMIIBfakeKEY\n-----END PRIVATE KEY-----\n";

std::string b64(const std::string& s) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    const unsigned v =
        (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8 | (unsigned char)s[i + 2];
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (s.size() - i == 1) {
    const unsigned v = (unsigned char)s[i] << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (s.size() - i == 2) {
    const unsigned v = (unsigned char)s[i] << 16 | (unsigned char)s[i + 1] << 8;
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

std::string two_context_config() {
  return std::string(R"(apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: )") +
         b64(kCaPem) + R"(
- name: other
  cluster:
    server: http://10.0.0.9:8080
    insecure-skip-tls-verify: true
contexts:
- name: admin
  context:
    cluster: local
    user: admin
    namespace: ml
- name: viewer
  context:
    cluster: other
    user: viewer
users:
- name: admin
  user:
    client-certificate-data: )" +
         b64(kCertPem) + R"(
    client-key-data: )" +
         b64(kKeyPem) + R"(
- name: viewer
  user:
    token: abc.def.ghi
)";
}

TEST(Kubeconfig, CurrentContextWithInlineBase64ClientCertificate) {
  TempDir dir;
  const auto path = dir.write("kubeconfig", two_context_config());
  const Config c = load_kubeconfig(path);
  EXPECT_EQ(c.server, "https://127.0.0.1:6443") << "trailing slash removed";
  EXPECT_EQ(c.ca_pem, kCaPem);
  EXPECT_EQ(c.client_cert_pem, kCertPem);
  EXPECT_EQ(c.client_key_pem, kKeyPem);
  EXPECT_TRUE(c.bearer_token.empty());
  EXPECT_EQ(c.default_namespace, "ml");
  EXPECT_FALSE(c.insecure_skip_tls_verify);
  EXPECT_NE(c.origin.find(path.string()), std::string::npos);
}

TEST(Kubeconfig, ExplicitContextWithTokenAndInsecureFlag) {
  TempDir dir;
  const Config c = load_kubeconfig(dir.write("kc", two_context_config()), "viewer");
  EXPECT_EQ(c.server, "http://10.0.0.9:8080");
  EXPECT_EQ(c.bearer_token, "abc.def.ghi");
  EXPECT_TRUE(c.insecure_skip_tls_verify);
  EXPECT_EQ(c.default_namespace, "default");
  EXPECT_TRUE(c.ca_pem.empty());
}

TEST(Kubeconfig, FileReferencesResolveAgainstTheKubeconfigFolder) {
  TempDir dir;
  dir.write("pki/ca.crt", kCaPem);
  dir.write("pki/admin.crt", kCertPem);
  const auto key = dir.write("abs/admin.key", kKeyPem);
  dir.write("tok", "  secret-token\n");
  const auto path = dir.write("conf/kubeconfig", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://h:1", certificate-authority: ../pki/ca.crt}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {client-certificate: ../pki/admin.crt, client-key: )" +
                                                     key.string() + R"(, tokenFile: ../tok}}]
)");
  const Config c = load_kubeconfig(path);
  EXPECT_EQ(c.ca_pem, kCaPem);
  EXPECT_EQ(c.client_cert_pem, kCertPem);
  EXPECT_EQ(c.client_key_pem, kKeyPem);
  EXPECT_EQ(c.bearer_token_file, dir.path() / "conf/../tok");
}

void expect_config_error(const std::string& yaml, const std::vector<std::string>& fragments,
                         const std::string& context = {}) {
  TempDir dir;
  const auto path = dir.write("bad-kubeconfig", yaml);
  try {
    load_kubeconfig(path, context);
    FAIL() << "accepted:\n" << yaml;
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << "must name the file: " << what;
    for (const auto& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << what;
  }
}

TEST(Kubeconfig, ErrorsNameTheFileAndTheKey) {
  expect_config_error("clusters: []\n", {"current-context is not set"});
  expect_config_error("current-context: x\ncontexts: []\n",
                      {"current-context", "'x'", "'contexts'"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {}}]
)",
                      {"clusters[name=k].cluster.server is missing"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: []
)",
                      {"contexts[name=c].context.user", "'u'", "'users'"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "https://h", certificate-authority-data: "%%%"}}]
)",
                      {"clusters[name=k].cluster.certificate-authority-data", "invalid base64"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "https://h", certificate-authority: /nonexistent/ca.crt}}]
)",
                      {"clusters[name=k].cluster.certificate-authority", "/nonexistent/ca.crt"});
  expect_config_error(
      R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {command: aws}}}]
)",
      {"users[name=u].user.exec.apiVersion must be client.authentication.k8s.io/v1"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1}}}]
)",
                      {"users[name=u].user.exec.command is missing"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: a,
                                interactiveMode: Always}}}]
)",
                      {"users[name=u].user.exec.interactiveMode is Always"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: a,
                                env: [{value: x}]}}}]
)",
                      {"users[name=u].user.exec.env[0].name is missing"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {auth-provider: {name: gcp}}}]
)",
                      {"users[name=u].user", "auth-provider credentials are not supported"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {client-certificate-data: Zm9v}}]
)",
                      {"client-certificate and client-key must be given together"});
  expect_config_error(R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "ftp://h"}}]
)",
                      {"clusters[name=k].cluster.server", "ftp://h"});
  expect_config_error("current-context: [unclosed\n", {"invalid YAML"});
  expect_config_error(two_context_config(), {"requested context", "'nope'"}, "nope");
}

TEST(Kubeconfig, ExecPluginWithArgsEnvAndARelativeCommand) {
  TempDir dir;
  const auto path = dir.write("kube/config", R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: bin/get-token
      args: [--cluster, prod]
      env: [{name: AWS_PROFILE, value: ml}]
      provideClusterInfo: true
      interactiveMode: Never
)");
  const Config cfg = load_kubeconfig(path);
  ASSERT_TRUE(cfg.exec.has_value());
  EXPECT_EQ(cfg.exec->api_version, "client.authentication.k8s.io/v1beta1");
  // A command with a slash is relative to the kubeconfig's folder, as kubectl does.
  EXPECT_EQ(cfg.exec->command, (dir.path() / "kube" / "bin/get-token").string());
  EXPECT_EQ(cfg.exec->args, (std::vector<std::string>{"--cluster", "prod"}));
  ASSERT_EQ(cfg.exec->env.size(), 1u);
  EXPECT_EQ(cfg.exec->env[0], (std::pair<std::string, std::string>{"AWS_PROFILE", "ml"}));
  EXPECT_TRUE(cfg.exec->provide_cluster_info);

  const auto on_path = dir.write("other", R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}}]
)");
  const Config plain = load_kubeconfig(on_path);
  ASSERT_TRUE(plain.exec.has_value());
  EXPECT_EQ(plain.exec->command, "aws");  // looked up on PATH when run
  EXPECT_FALSE(plain.exec->provide_cluster_info);
}

TEST(Kubeconfig, MissingFileIsNamed) {
  try {
    load_kubeconfig("/nonexistent/kubeconfig");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kubeconfig"), std::string::npos);
  }
}

TEST(Kubeconfig, DefaultLookupTakesTheFirstExistingKubeconfigEntry) {
  TempDir dir;
  const auto path = dir.write("kc", two_context_config());
  const std::string list = "/nonexistent/a:" + path.string();
  ::setenv("KUBECONFIG", list.c_str(), 1);
  const Config c = load_default_config();
  ::unsetenv("KUBECONFIG");
  EXPECT_EQ(c.server, "https://127.0.0.1:6443");
  // An explicit path wins over the environment.
  EXPECT_EQ(load_default_config(path.string()).server, "https://127.0.0.1:6443");
}

}  // namespace
}  // namespace ddp3d::kube
