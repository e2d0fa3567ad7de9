#include "operator/kube/tls_setup.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/ssl.hpp>

#include "operator/kube/errors.h"

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
