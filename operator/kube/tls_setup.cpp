#include "operator/kube/tls_setup.h"

#include <dlfcn.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <atomic>
#include <boost/asio/ssl.hpp>

#include "operator/kube/errors.h"

namespace {
// Set once a client with its own CA exists (configure_tls): from then on the system store is
// never what verifies the API server.
std::atomic<bool> g_own_ca{false};
}  // namespace

// cpprest calls SSL_CTX_set_default_verify_paths on the fresh SSL context of every new
// connection, before our callback (load_into) replaces its certificate store. With Debian's
// /usr/lib/ssl/cert.pem that decodes some 140 PEM certificates per connection: a perf profile
// of a 64-pod burst (16 new connections) put most of the operator's CPU there, in OpenSSL 3's
// decoders and their locks. cpprest has no option to skip it, so the operator defines the
// symbol itself (the executable's definition wins over libssl's for libcpprest's call): with
// a CA of our own the call is a no-op, otherwise it forwards to OpenSSL's.
extern "C" int SSL_CTX_set_default_verify_paths(SSL_CTX* ctx) {
  if (g_own_ca.load(std::memory_order_acquire)) return 1;
  using Fn = int (*)(SSL_CTX*);
  static const auto real =
      reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "SSL_CTX_set_default_verify_paths"));
  return real != nullptr ? real(ctx) : 0;
}

namespace ddp3d::kube::detail {
namespace {

void load_into(boost::asio::ssl::context& ctx, const std::string& ca, const std::string& cert,
               const std::string& key) {
  if (!ca.empty()) {
    // Replace the default store (cpprest loads the system paths first) by one holding our CA.
    SSL_CTX_set_cert_store(ctx.native_handle(), X509_STORE_new());
    ctx.add_certificate_authority(boost::asio::buffer(ca.data(), ca.size()));
  }
  if (!cert.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(cert.data(), cert.size()));
    ctx.use_private_key(boost::asio::buffer(key.data(), key.size()),
                        boost::asio::ssl::context::pem);
  }
}

}  // namespace

void configure_tls(web::http::client::http_client_config& http, const Config& config) {
  http.set_validate_certificates(!config.insecure_skip_tls_verify);
  const std::string ca = config.ca_pem, cert = config.client_cert_pem, key = config.client_key_pem;
  if (ca.empty() && cert.empty()) return;
  if (!ca.empty()) g_own_ca.store(true, std::memory_order_release);
  http.set_ssl_context_callback(
      [ca, cert, key](boost::asio::ssl::context& ctx) { load_into(ctx, ca, cert, key); });
}

void check_tls_material(const Config& config) {
  boost::asio::ssl::context ctx(boost::asio::ssl::context::tls_client);
  try {
    if (!config.ca_pem.empty()) {
      SSL_CTX_set_cert_store(ctx.native_handle(), X509_STORE_new());
      ctx.add_certificate_authority(
          boost::asio::buffer(config.ca_pem.data(), config.ca_pem.size()));
    }
  } catch (const boost::system::system_error& e) {
    throw ConfigError(config.origin + ": certificate authority is not valid PEM: " + e.what());
  }
  try {
    if (!config.client_cert_pem.empty())
      ctx.use_certificate_chain(
          boost::asio::buffer(config.client_cert_pem.data(), config.client_cert_pem.size()));
  } catch (const boost::system::system_error& e) {
    throw ConfigError(config.origin + ": client certificate is not valid PEM: " + e.what());
  }
  try {
    if (!config.client_key_pem.empty())
      ctx.use_private_key(
          boost::asio::buffer(config.client_key_pem.data(), config.client_key_pem.size()),
          boost::asio::ssl::context::pem);
  } catch (const boost::system::system_error& e) {
    throw ConfigError(config.origin + ": client key is not a valid PEM private key: " + e.what());
  }
  if (!config.client_cert_pem.empty() && SSL_CTX_check_private_key(ctx.native_handle()) != 1)
    throw ConfigError(config.origin + ": client key does not match the client certificate");
}

}  // namespace ddp3d::kube::detail
