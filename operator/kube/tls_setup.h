// TLS settings of the HTTP client from a Config: CA trust, client certificate, verification.
// Internal to the library (pulls in cpprest's HTTP client and Boost.Asio SSL).
#pragma once

#include <cpprest/http_client.h>

#include "operator/kube/config.h"

namespace ddp3d::kube::detail {

// Fills `http` with the TLS part of `config`. With a CA in the config, *only* that CA is
// trusted (as kubectl does), not the system store.
void configure_tls(web::http::client::http_client_config& http, const Config& config);

// Loads the CA and client key pair into a throwaway SSL context so that bad PEM is reported
// when the Client is built (ConfigError naming the origin) rather than on the first request.
void check_tls_material(const Config& config);

}  // namespace ddp3d::kube::detail
