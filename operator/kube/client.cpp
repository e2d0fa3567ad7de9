#include "operator/kube/client.h"

#include <cpprest/http_client.h>
#include <cpprest/uri_builder.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <future>
#include <mutex>
#include <utility>
#include <vector>

#include "common/log.h"
#include "operator/kube/errors.h"
#include "operator/kube/exec_credential.h"
#include "operator/kube/request_deadline.h"
#include "operator/kube/tls_setup.h"
#include "operator/kube/token_source.h"

namespace ddp3d::kube {

namespace http = web::http;
using web::json::value;

namespace {

const char* content_type_of(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
  }
  return "application/merge-patch+json";
}

std::string metadata_string(const value& obj, const char* key) {
  if (!obj.is_object() || !obj.has_object_field("metadata")) return {};
  const value& meta = obj.at("metadata");
  return meta.has_string_field(key) ? meta.at(key).as_string() : std::string();
}

value parse_body(const std::string& body, const std::string& what) {
  if (body.empty()) return value::null();
  std::error_code ec;
  value v = value::parse(body, ec);
  if (ec) throw TransportError(what + ": response is not JSON (" + ec.message() + ")");
  return v;
}

}  // namespace

std::string meta_name(const value& obj) {
  return metadata_string(obj, "name");
}
std::string meta_namespace(const value& obj) {
  return metadata_string(obj, "namespace");
}
std::string meta_resource_version(const value& obj) {
  return metadata_string(obj, "resourceVersion");
}
std::string meta_uid(const value& obj) {
  return metadata_string(obj, "uid");
}
std::string object_key(const std::string& ns, const std::string& name) {
  return ns.empty() ? name : ns + "/" + name;
}
std::string object_key(const value& obj) {
  return object_key(meta_namespace(obj), meta_name(obj));
}

namespace {
TokenSource token_source(const Config& config) {
  if (config.exec) {
    return TokenSource(
        std::make_unique<ExecCredentialSource>(*config.exec, config.server, config.ca_pem));
  }
  return TokenSource(config.bearer_token, config.bearer_token_file);
}

// One request waiting for its answer. The answer arrives from cpprest's thread pool, or
// abort() fails it first; whichever comes first settles it.
struct InFlight {
  using Answer = std::pair<http::status_code, std::string>;
  explicit InFlight(std::string w) : what(std::move(w)) {}
  std::string what;  // "GET https://…/path", for the error abort() gives it
  pplx::cancellation_token_source cancel;
  std::promise<Answer> promise;
  std::atomic<bool> settled{false};

  void set_value(Answer a) {
    if (!settled.exchange(true)) promise.set_value(std::move(a));
  }
  void set_error(std::exception_ptr e) {
    if (!settled.exchange(true)) promise.set_exception(std::move(e));
  }
};

// Why a client refuses to start: a bearer token (static, file or exec plugin) would cross
// the network in clear text to an http:// server.
void refuse_token_over_plain_http(const Config& config) {
  if (config.server.rfind("http://", 0) != 0) return;
  const char* kind = config.exec                         ? "an exec credential plugin's token"
                     : !config.bearer_token_file.empty() ? "a bearer token file"
                     : !config.bearer_token.empty()      ? "a bearer token"
                                                         : nullptr;
  if (kind == nullptr) return;
  throw ConfigError(config.origin + ": the user authenticates with " + kind +
                    ", but the cluster's server " + config.server +
                    " is plain http://; refusing to send the token unencrypted (use https://)");
}

}  // namespace

struct Client::Impl {
  explicit Impl(Config c) : config(std::move(c)), token(token_source(config)) {
    if (config.server.empty()) throw ConfigError(config.origin + ": no API server address");
    refuse_token_over_plain_http(config);
    detail::check_tls_material(config);
    http = std::make_unique<http::client::http_client>(config.server,
                                                       make_http_config(config.request_timeout));
  }

  http::client::http_client_config make_http_config(std::chrono::milliseconds timeout) const {
    http::client::http_client_config c;
    c.set_timeout(timeout);
    if (config.server.rfind("https://", 0) == 0) detail::configure_tls(c, config);
    return c;
  }

  http::http_request make_request(const http::method& method, const std::string& path_and_query) {
    http::http_request req(method);
    req.set_request_uri(path_and_query);
    req.headers().add("Accept", "application/json");
    req.headers().add("User-Agent", config.user_agent);
    const std::string t = token.token();
    if (!t.empty()) req.headers().add("Authorization", "Bearer " + t);
    return req;
  }

  void check_not_aborted(const std::string& what) {
    if (aborted.load())
      throw TransportError(what + ": not sent, the client was shut off (" + abort_reason + ")");
  }

  // Sends once; returns the HTTP status and body, throws TransportError.
  InFlight::Answer exchange(const http::method& method, const std::string& path_and_query,
                            const std::optional<value>& body, const std::string& content_type,
                            const std::string& what) {
    // cpprest's own timeout normally ends a stuck request; the deadline (a little later, or
    // the caller's ScopedRequestDeadline) is a backstop so that no library bug can block a
    // controller thread forever, and a renewal never outlives the renew deadline.
    const auto started = std::chrono::steady_clock::now();
    const auto deadline = request_deadline(config.request_timeout + std::chrono::seconds(5));
    if (started >= deadline)
      throw TransportError(what + ": not sent, the caller's deadline has passed");
    http::http_request req = make_request(method, path_and_query);
    if (body) req.set_body(body->serialize(), content_type);
    auto call = std::make_shared<InFlight>(what);
    auto arrived = call->promise.get_future();
    {
      std::lock_guard lock(mu);
      check_not_aborted(what);
      in_flight.push_back(call);
    }
    struct Unregister {
      Impl& impl;
      const std::shared_ptr<InFlight>& call;
      ~Unregister() {
        std::lock_guard lock(impl.mu);
        std::erase(impl.in_flight, call);
      }
    } unregister{*this, call};
    http->request(req, call->cancel.get_token())
        .then([](const http::http_response& resp) {
          const http::status_code code = resp.status_code();
          return resp.extract_utf8string(true).then(
              [code](std::string text) { return std::make_pair(code, std::move(text)); });
        })
        .then([call](const pplx::task<InFlight::Answer>& t) {
          try {
            call->set_value(t.get());
          } catch (...) {
            call->set_error(std::current_exception());
          }
        });
    if (arrived.wait_until(deadline) != std::future_status::ready) {
      call->cancel.cancel();
      const auto budget = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - started);
      throw TransportError(what + ": no answer within " + std::to_string(budget.count()) + " ms");
    }
    try {
      return arrived.get();
    } catch (const TransportError&) {
      throw;
    } catch (const std::exception& e) {
      throw TransportError(what + ": " + e.what());
    }
  }

  // Sends and returns the parsed body of a 2xx answer; throws ApiError / TransportError. A
  // 401 with an exec plugin's token drops that token and asks the plugin once more (it may
  // have been revoked before its expirationTimestamp), as client-go does.
  value send(const http::method& method, const std::string& path_and_query,
             const std::optional<value>& body, const std::string& content_type) {
    const std::string what = method + " " + config.server + path_and_query;
    check_not_aborted(what);
    InFlight::Answer answer = exchange(method, path_and_query, body, content_type, what);
    if (answer.first == http::status_codes::Unauthorized && token.invalidate()) {
      log::info(what + ": 401 Unauthorized; asking the exec credential plugin for a new token");
      answer = exchange(method, path_and_query, body, content_type, what);
    }
    const auto& [status, text] = answer;
    if (status < 200 || status >= 300)
      throw_api_error(parse_api_status(status, text), method, path_and_query);
    return parse_body(text, method + " " + path_and_query);
  }

  void abort(const std::string& reason) {
    std::lock_guard lock(mu);
    // Written once, before the flag: whoever sees the flag set may read it without the lock.
    if (!aborted.load()) {
      abort_reason = reason;
      aborted.store(true);
    }
    // A request that is still getting its token runs no plugin past this point.
    token.cancel();
    for (const auto& call : in_flight) {
      // Settle first: cancelling makes cpprest fail the request ("Operation canceled"), maybe
      // on this very thread, and the first error to arrive is the one the caller sees.
      call->set_error(std::make_exception_ptr(TransportError(
          call->what + ": abandoned, the client was shut off (" + abort_reason + ")")));
      call->cancel.cancel();
    }
  }

  std::string namespace_for(const Resource& r, const std::string& ns, const value& obj) const {
    if (!r.namespaced) return {};
    if (!ns.empty()) return ns;
    const std::string from_obj = meta_namespace(obj);
    return from_obj.empty() ? config.default_namespace : from_obj;
  }

  Config config;
  TokenSource token;
  std::unique_ptr<http::client::http_client> http;
  std::atomic<bool> aborted{false};
  std::string abort_reason;  // set once, before `aborted`
  std::mutex mu;             // guards in_flight
  std::vector<std::shared_ptr<InFlight>> in_flight;
};

Client::Client(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Client::~Client() = default;

const Config& Client::config() const {
  return impl_->config;
}

void Client::abort(const std::string& reason) {
  impl_->abort(reason);
}

value Client::request(const std::string& method, const std::string& path,
                      const std::optional<value>& body, const std::string& content_type) {
  return impl_->send(method, path, body, content_type);
}

value Client::get(const Resource& r, const std::string& ns, const std::string& name) {
  return impl_->send(http::methods::GET, resource_path(r, ns, name), std::nullopt, {});
}

std::optional<value> Client::find(const Resource& r, const std::string& ns,
                                  const std::string& name) {
  try {
    return get(r, ns, name);
  } catch (const NotFoundError&) {
    return std::nullopt;
  }
}

ObjectList Client::list(const Resource& r, const std::string& ns, const ListOptions& options) {
  ObjectList out;
  std::string continue_token;
  do {
    web::uri_builder b(resource_path(r, ns));
    if (!options.label_selector.empty()) b.append_query("labelSelector", options.label_selector);
    if (!options.field_selector.empty()) b.append_query("fieldSelector", options.field_selector);
    // resourceVersion only applies to the first page; continue tokens carry it after that.
    if (!options.resource_version.empty() && continue_token.empty())
      b.append_query("resourceVersion", options.resource_version);
    if (options.limit > 0) b.append_query("limit", std::to_string(options.limit));
    if (!continue_token.empty()) b.append_query("continue", continue_token);
    value page = impl_->send(http::methods::GET, b.to_string(), std::nullopt, {});
    if (page.has_array_field("items"))
      for (auto& item : page.at("items").as_array()) {
        // List items omit apiVersion/kind; restore them so cached objects are self-describing.
        if (!item.has_field("kind")) item["kind"] = value::string(r.kind);
        if (!item.has_field("apiVersion")) item["apiVersion"] = value::string(r.api_version());
        out.items.push_back(std::move(item));
      }
    continue_token.clear();
    if (page.has_object_field("metadata")) {
      const value& meta = page.at("metadata");
      if (meta.has_string_field("resourceVersion"))
        out.resource_version = meta.at("resourceVersion").as_string();
      if (meta.has_string_field("continue")) continue_token = meta.at("continue").as_string();
    }
  } while (!continue_token.empty());
  return out;
}

value Client::create(const Resource& r, const std::string& ns, const value& obj) {
  return impl_->send(http::methods::POST, resource_path(r, impl_->namespace_for(r, ns, obj)), obj,
                     "application/json");
}

value Client::replace(const Resource& r, const std::string& ns, const value& obj) {
  const std::string name = meta_name(obj);
  if (name.empty())
    throw std::invalid_argument("replace " + r.plural + ": object has no metadata.name");
  return impl_->send(http::methods::PUT, resource_path(r, impl_->namespace_for(r, ns, obj), name),
                     obj, "application/json");
}

value Client::replace_status(const Resource& r, const std::string& ns, const value& obj) {
  const std::string name = meta_name(obj);
  if (name.empty())
    throw std::invalid_argument("replace_status " + r.plural + ": object has no metadata.name");
  return impl_->send(http::methods::PUT,
                     resource_path(r, impl_->namespace_for(r, ns, obj), name, "status"), obj,
                     "application/json");
}

value Client::patch(const Resource& r, const std::string& ns, const std::string& name,
                    const value& patch, PatchType type) {
  return impl_->send(http::methods::PATCH,
                     resource_path(r, impl_->namespace_for(r, ns, value()), name), patch,
                     content_type_of(type));
}

value Client::patch_status(const Resource& r, const std::string& ns, const std::string& name,
                           const value& patch, PatchType type) {
  return impl_->send(http::methods::PATCH,
                     resource_path(r, impl_->namespace_for(r, ns, value()), name, "status"), patch,
                     content_type_of(type));
}

value Client::remove(const Resource& r, const std::string& ns, const std::string& name,
                     const DeleteOptions& options) {
  value body = value::object();
  body["apiVersion"] = value::string("v1");
  body["kind"] = value::string("DeleteOptions");
  if (!options.propagation_policy.empty())
    body["propagationPolicy"] = value::string(options.propagation_policy);
  if (options.grace_period_seconds)
    body["gracePeriodSeconds"] = value::number(static_cast<int64_t>(*options.grace_period_seconds));
  if (!options.precondition_uid.empty() || !options.precondition_resource_version.empty()) {
    value pre = value::object();
    if (!options.precondition_uid.empty()) pre["uid"] = value::string(options.precondition_uid);
    if (!options.precondition_resource_version.empty())
      pre["resourceVersion"] = value::string(options.precondition_resource_version);
    body["preconditions"] = pre;
  }
  return impl_->send(http::methods::DEL,
                     resource_path(r, impl_->namespace_for(r, ns, value()), name), body,
                     "application/json");
}

void Client::watch_stream(const Resource& r, const std::string& ns, const WatchOptions& options,
                          const std::function<void(const WatchEvent&)>& on_event,
                          const std::stop_token& stop) {
  web::uri_builder b(resource_path(r, ns));
  b.append_query("watch", "1");
  if (options.allow_bookmarks) b.append_query("allowWatchBookmarks", "true");
  if (!options.resource_version.empty())
    b.append_query("resourceVersion", options.resource_version);
  if (!options.label_selector.empty()) b.append_query("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) b.append_query("fieldSelector", options.field_selector);
  if (options.timeout_seconds > 0)
    b.append_query("timeoutSeconds", std::to_string(options.timeout_seconds));
  const std::string path = b.to_string();
  const std::string what = "watch " + path;
  impl_->check_not_aborted(what);

  // A connection of its own: its timeout must outlast the whole stream, not one request.
  // cpprest restarts the timer on every chunk, so it is an idle limit in practice.
  const auto idle_limit =
      std::chrono::seconds(options.timeout_seconds > 0 ? options.timeout_seconds + 60 : 3600);
  http::client::http_client client(impl_->config.server, impl_->make_http_config(idle_limit));
  pplx::cancellation_token_source cancel;
  std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
  if (stop.stop_requested()) return;

  http::http_response resp;
  try {
    resp = client.request(impl_->make_request(http::methods::GET, path), cancel.get_token()).get();
  } catch (const std::exception& e) {
    if (stop.stop_requested()) return;
    throw TransportError(what + ": " + e.what());
  }
  if (resp.status_code() != http::status_codes::OK) {
    std::string text;
    try {
      text = resp.extract_utf8string(true).get();
    } catch (const std::exception&) {
    }
    // The Watcher reconnects; by then an exec plugin will have been asked for a new token.
    if (resp.status_code() == http::status_codes::Unauthorized) impl_->token.invalidate();
    throw_api_error(parse_api_status(resp.status_code(), text), "GET", path);
  }

  log::debug(what + ": stream open");
  auto body = resp.body().streambuf();
  LineSplitter lines;
  std::vector<char> buf(std::size_t{64} * 1024);
  for (;;) {
    std::size_t n = 0;
    try {
      // getn(1) returns as soon as any byte is there (or 0 at the end of the stream); then take
      // whatever else has already arrived without blocking.
      n = body.getn(reinterpret_cast<uint8_t*>(buf.data()), 1).get();
      if (n > 0) {
        const std::size_t more = std::min<std::size_t>(body.in_avail(), buf.size() - 1);
        if (more > 0) n += body.getn(reinterpret_cast<uint8_t*>(buf.data()) + 1, more).get();
      }
    } catch (const std::exception& e) {
      if (stop.stop_requested()) return;
      throw TransportError(what + ": stream broken: " + e.what());
    }
    if (stop.stop_requested()) return;
    if (n == 0) {
      if (!lines.pending().empty()) throw TransportError(what + ": stream ended inside an event");
      log::debug(what + ": stream closed by the server");
      return;  // the server closed the watch (timeoutSeconds): normal end
    }
    for (const std::string& line : lines.feed(std::string_view(buf.data(), n))) {
      WatchEvent ev = parse_watch_event(line);
      log::debug(what + ": " + to_string(ev.type) + " " + meta_name(ev.object) + " rv " +
                 meta_resource_version(ev.object));
      if (ev.type == EventType::kError) {
        // The Status inside an ERROR event carries the HTTP-equivalent code (410 = too old).
        const int code =
            ev.object.has_integer_field("code") ? ev.object.at("code").as_integer() : 500;
        ApiStatus st = parse_api_status(code, ev.object.serialize());
        throw_api_error(std::move(st), "WATCH", path);
      }
      on_event(ev);
      if (stop.stop_requested()) return;
    }
  }
}

}  // namespace ddp3d::kube
