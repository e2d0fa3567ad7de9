// A small HTTP/1.1 server on POSIX sockets for /metrics and health probes: one accept
// thread plus a few connection threads, one request per connection (Connection: close).
// Slow or malformed clients are bounded by a per-request deadline and a head-size limit.
//
//   ddp3d::http::Server server({.address = "0.0.0.0", .port = 9100});
//   server.handle("/hello", [](const Request&) { return Response{200, "text/plain", "hi\n"}; });
//   server.start();          // throws std::runtime_error naming address:port on failure
//   server.port();           // the bound port (useful with port 0)
//   server.stop();           // or let the destructor do it
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/http/request.h"

namespace ddp3d::http {

using Handler = std::function<Response(const Request&)>;

struct ServerOptions {
  std::string address = "0.0.0.0";  // IPv4 literal to bind
  std::uint16_t port = 0;           // 0 = ephemeral, see Server::port()
  // Whole-request deadline: reading the head and writing the response must finish in this.
  std::chrono::milliseconds request_timeout{5000};
  std::size_t max_head_bytes = 16 * 1024;  // larger heads get 431
  int worker_threads = 4;                  // connections served concurrently
  std::size_t max_pending = 64;            // accepted but unserved; beyond this: 503
};

class Server {
 public:
  explicit Server(ServerOptions options = {});
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Registers a handler for GET (and HEAD) on this exact path (query string ignored).
  // Other methods on a registered path get 405; unregistered paths get 404. May be called
  // before or after start(). A handler that throws yields 500.
  void handle(const std::string& path, Handler handler);

  // Binds, listens and starts the threads. Throws std::runtime_error naming the address.
  void start();
  // Stops accepting, finishes/aborts in-flight requests and joins every thread. Idempotent.
  void stop();

  bool running() const { return running_.load(); }
  // The bound port (valid after start()).
  std::uint16_t port() const { return bound_port_; }

 private:
  void accept_loop();
  void worker_loop();
  void serve_connection(int fd);
  Response dispatch(const Request& request, std::map<std::string, std::string>& extra);

  ServerOptions options_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};  // written by stop() to wake the accept thread's poll()
  std::uint16_t bound_port_ = 0;
  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};

  std::mutex handlers_mutex_;
  std::map<std::string, Handler> handlers_;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<int> pending_;  // accepted connection fds

  std::thread accept_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace ddp3d::http
