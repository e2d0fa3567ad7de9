// A bearer token never goes to an http:// server: a client with a token (static, file, or
// from an exec plugin) for a plain-HTTP cluster refuses to start, naming the kubeconfig.
#include <gtest/gtest.h>

#include <string>

#include "operator/kube/client.h"
#include "operator/kube/errors.h"

namespace ddp3d::kube {
namespace {

Config base(const std::string& server) {
  Config c;
  c.server = server;
  c.origin = "kubeconfig /home/me/.kube/config (context dev)";
  return c;
}

std::string refusal(const Config& c) {
  try {
    Client client(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PlainHttpToken, EveryKindOfTokenIsRefused) {
  Config token = base("http://10.0.0.9:8080");
  token.bearer_token = "secret";
  Config file = base("http://10.0.0.9:8080");
  file.bearer_token_file = "/var/run/token";
  Config exec = base("http://10.0.0.9:8080");
  exec.exec = ExecPlugin{"client.authentication.k8s.io/v1", "get-token", {}, {}, false};
  for (const auto& [c, kind] :
       {std::pair{token, "a bearer token"}, std::pair{file, "a bearer token file"},
        std::pair{exec, "an exec credential plugin's token"}}) {
    const std::string error = refusal(c);
    EXPECT_NE(error.find("kubeconfig /home/me/.kube/config (context dev)"), std::string::npos)
        << error;
    EXPECT_NE(error.find(std::string("authenticates with ") + kind), std::string::npos) << error;
    EXPECT_NE(error.find("http://10.0.0.9:8080 is plain http://"), std::string::npos) << error;
    EXPECT_EQ(error.find("secret"), std::string::npos) << "the token itself is not printed";
  }
}

TEST(PlainHttpToken, HttpsWithATokenAndHttpWithoutOneAreFine) {
  Config tls = base("https://10.0.0.9:6443");
  tls.bearer_token = "secret";
  EXPECT_EQ(refusal(tls), "");
  EXPECT_EQ(refusal(base("http://127.0.0.1:8080")), "");
}

}  // namespace
}  // namespace ddp3d::kube
