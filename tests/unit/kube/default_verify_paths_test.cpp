// The operator's SSL_CTX_set_default_verify_paths (operator/kube/tls_setup.cpp): it forwards to
// OpenSSL's until a client with its own CA exists, and is a no-op after that, so the system
// bundle is not decoded for every new connection. Its own executable: the switch is
// process-wide and one-way, so the two halves must run in this order.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "operator/kube/tls_setup.h"

namespace ddp3d::kube {
namespace {

int store_objects(SSL_CTX* ctx) {
  return sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx)));
}

// Two self-signed certificates in one PEM file, from the openssl command line tool.
std::string two_certificate_bundle() {
  char dir[] = "/tmp/ddp3d_verify_paths_XXXXXX";
  if (mkdtemp(dir) == nullptr) return "";
  const std::string d = dir;
  for (const std::string name : {"a", "b"}) {
    std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes ";
    cmd.append("-subj /CN=").append(name).append(" -days 1 -keyout ");
    cmd.append(d).append("/").append(name).append(".key -out ");
    cmd.append(d).append("/").append(name).append(".pem 2>/dev/null");
    if (std::system(cmd.c_str()) != 0) return "";
  }
  std::string bundle = d + "/bundle.pem";
  std::string cat = "cat ";
  cat.append(d).append("/a.pem ").append(d).append("/b.pem > ").append(bundle);
  if (std::system(cat.c_str()) != 0) return "";
  return bundle;
}

TEST(DefaultVerifyPaths, ForwardsUntilAClientHasItsOwnCaThenSkipsTheSystemStore) {
  const std::string bundle = two_certificate_bundle();
  ASSERT_FALSE(bundle.empty()) << "could not make certificates with the openssl tool";
  ASSERT_EQ(setenv("SSL_CERT_FILE", bundle.c_str(), 1), 0);  // OpenSSL's default file

  SSL_CTX* before = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(SSL_CTX_set_default_verify_paths(before), 1);
  EXPECT_EQ(store_objects(before), 2);  // forwarded: OpenSSL loaded the default file

  web::http::client::http_client_config http;
  Config config;
  config.ca_pem = "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n";
  detail::configure_tls(http, config);

  SSL_CTX* after = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(SSL_CTX_set_default_verify_paths(after), 1);
  EXPECT_EQ(store_objects(after), 0);  // skipped: the client's own CA replaces the store
  SSL_CTX_free(before);
  SSL_CTX_free(after);
  std::filesystem::remove_all(std::filesystem::path(bundle).parent_path());
}

}  // namespace
}  // namespace ddp3d::kube
