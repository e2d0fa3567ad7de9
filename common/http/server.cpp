#include "common/http/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/log.h"

namespace ddp3d::http {
namespace {

using Clock = std::chrono::steady_clock;

// How often blocked reads look at stopping_, so stop() never waits a full request timeout.
constexpr int kStopCheckMs = 100;

std::string errno_text() {
  return std::strerror(errno);
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

// The end of the request head (just past the blank line), or npos while incomplete.
std::size_t head_end(const std::string& buf) {
  const auto crlf = buf.find("\n\r\n");
  const auto lf = buf.find("\n\n");
  if (crlf == std::string::npos && lf == std::string::npos) return std::string::npos;
  if (lf == std::string::npos || (crlf != std::string::npos && crlf < lf)) return crlf + 3;
  return lf + 2;
}

// Writes all of data before the deadline; false if the peer is too slow or gone.
bool write_all(int fd, std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      const int wait = remaining_ms(deadline);
      if (wait == 0 || ::poll(&p, 1, wait) <= 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

Server::Server(ServerOptions options) : options_(std::move(options)) {
  if (options_.worker_threads < 1) {
    throw std::invalid_argument("http server: worker_threads must be >= 1");
  }
}

Server::~Server() {
  stop();
}

void Server::handle(const std::string& path, Handler handler) {
  if (path.empty() || path[0] != '/') {
    throw std::invalid_argument("http server: handler path '" + path + "' must start with '/'");
  }
  std::lock_guard lock(handlers_mutex_);
  handlers_[path] = std::move(handler);
}

void Server::start() {
  if (running_) throw std::logic_error("http server: start() called twice");
  const std::string where = options_.address + ":" + std::to_string(options_.port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(options_.port);
  if (::inet_pton(AF_INET, options_.address.c_str(), &addr.sin_addr) != 1) {
    throw std::runtime_error("http server: '" + options_.address +
                             "' is not an IPv4 address to bind");
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error("http server: socket(): " + errno_text());
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 128) != 0) {
    const std::string err = errno_text();
    ::close(fd);
    throw std::runtime_error("http server: cannot listen on " + where + ": " + err);
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (::pipe2(wake_pipe_, O_CLOEXEC) != 0) {
    const std::string err = errno_text();
    ::close(fd);
    throw std::runtime_error("http server: pipe2(): " + err);
  }
  listen_fd_ = fd;
  bound_port_ = ntohs(addr.sin_port);
  stopping_ = false;
  running_ = true;
  for (int i = 0; i < options_.worker_threads; ++i)
    workers_.emplace_back([this] { worker_loop(); });
  accept_thread_ = std::thread([this] { accept_loop(); });
}

void Server::stop() {
  if (!running_) return;
  stopping_ = true;
  const char byte = 1;
  while (::write(wake_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  queue_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
  for (int fd : pending_) ::close(fd);  // accepted but never served: drop
  pending_.clear();
  ::close(listen_fd_);
  ::close(wake_pipe_[0]);
  ::close(wake_pipe_[1]);
  listen_fd_ = wake_pipe_[0] = wake_pipe_[1] = -1;
  running_ = false;
}

void Server::accept_loop() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
  while (!stopping_) {
    const int ready = ::poll(fds, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      log::error("http server: poll(): " + errno_text());
      return;
    }
    if (fds[1].revents != 0 || stopping_) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (conn < 0) {
      // Out of descriptors: the pending connection keeps the socket readable, so back off
      // instead of spinning; other errors (EAGAIN, ECONNABORTED) just wait for the next one.
      if (errno == EMFILE || errno == ENFILE) {
        std::this_thread::sleep_for(std::chrono::milliseconds(kStopCheckMs));
      }
      continue;
    }
    std::unique_lock lock(queue_mutex_);
    if (pending_.size() >= options_.max_pending) {
      lock.unlock();
      // Overloaded: answer at once rather than queue without bound.
      const Response busy{503, "text/plain; charset=utf-8", "server busy\n"};
      write_all(conn, serialize_response(busy, false), Clock::now());
      ::close(conn);
      continue;
    }
    pending_.push_back(conn);
    lock.unlock();
    queue_cv_.notify_one();
  }
}

void Server::worker_loop() {
  while (true) {
    int fd = -1;
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (stopping_) return;
      fd = pending_.front();
      pending_.pop_front();
    }
    serve_connection(fd);
    ::close(fd);
  }
}

void Server::serve_connection(int fd) {
  const auto deadline = Clock::now() + options_.request_timeout;
  char chunk[4096];
  // Every exchange ends with the response, a half-close and a brief drain, so unread input
  // (the rest of an oversized head, a body we ignore) does not turn close() into a reset
  // that destroys the response before the client reads it.
  auto reply = [&](const Response& r, bool head_only,
                   const std::map<std::string, std::string>& extra = {}) {
    if (!write_all(fd, serialize_response(r, head_only, extra), deadline)) return;
    ::shutdown(fd, SHUT_WR);
    const auto drain_deadline = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
    while (true) {
      pollfd p{fd, POLLIN, 0};
      const int wait = remaining_ms(drain_deadline);
      if (wait == 0 || ::poll(&p, 1, wait) <= 0) break;
      if (::recv(fd, chunk, sizeof(chunk), 0) <= 0) break;
    }
  };

  // Read the head: bounded in size and in time (a slow client cannot hold a thread).
  std::string buf;
  std::size_t end = std::string::npos;
  while ((end = head_end(buf)) == std::string::npos) {
    if (buf.size() > options_.max_head_bytes) {
      reply({431, "text/plain; charset=utf-8", "request head too large\n"}, false);
      return;
    }
    if (stopping_) return;
    const int wait = remaining_ms(deadline);
    if (wait == 0) {
      reply({408, "text/plain; charset=utf-8", "request timeout\n"}, false);
      return;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, std::min(wait, kStopCheckMs));
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) continue;
    const ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
    if (n == 0) return;  // peer closed before finishing the head
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return;
    }
    buf.append(chunk, static_cast<std::size_t>(n));
  }
  if (end > options_.max_head_bytes) {
    reply({431, "text/plain; charset=utf-8", "request head too large\n"}, false);
    return;
  }

  const ParseResult parsed = parse_request_head(std::string_view(buf).substr(0, end));
  if (!parsed.request) {
    reply({parsed.error_status, "text/plain; charset=utf-8", parsed.error + "\n"}, false);
    return;
  }
  std::map<std::string, std::string> extra;
  const Response response = dispatch(*parsed.request, extra);
  reply(response, parsed.request->method == "HEAD", extra);
}

Response Server::dispatch(const Request& request, std::map<std::string, std::string>& extra) {
  Handler handler;
  {
    std::lock_guard lock(handlers_mutex_);
    const auto it = handlers_.find(request.path);
    if (it == handlers_.end()) return {404, "text/plain; charset=utf-8", "not found\n"};
    handler = it->second;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    extra["Allow"] = "GET, HEAD";
    return {405, "text/plain; charset=utf-8", "method not allowed\n"};
  }
  try {
    return handler(request);
  } catch (const std::exception& e) {
    log::error("http server: handler for " + request.path + " failed: " + e.what());
  } catch (...) {
    log::error("http server: handler for " + request.path + " failed");
  }
  return {500, "text/plain; charset=utf-8", "internal server error\n"};
}

}  // namespace ddp3d::http
