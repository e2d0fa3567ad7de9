#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ddp3d::testing {

std::string make_temp_dir(const std::string& prefix) {
  std::string pattern = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  pattern += "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
  }
  return pattern;
}

Subprocess::Subprocess(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env)
    : start_(std::chrono::steady_clock::now()) {
  output_path_ = make_temp_dir("ddp3d-proc-") + "/output.txt";
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    setpgid(0, 0);
    const int fd = open(output_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "exec %s failed: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid_, pid_);
}

Subprocess::~Subprocess() {
  if (!reaped_ && pid_ > 0) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;  // a destructor does not throw; a leftover folder is harmless
  std::filesystem::remove_all(std::filesystem::path(output_path_).parent_path(), ignored);
}

std::string Subprocess::output_so_far() const {
  std::ifstream in(output_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ProcessResult Subprocess::wait(std::chrono::milliseconds timeout) {
  ProcessResult r;
  const auto deadline = start_ + timeout;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  reaped_ = true;
  r.elapsed = std::chrono::steady_clock::now() - start_;
  if (r.timed_out) {
    r.exit_code = -1;
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.exit_code = 128 + WTERMSIG(status);
  }
  r.output = output_so_far();
  return r;
}

ProcessResult run(const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env,
                  std::chrono::milliseconds timeout) {
  Subprocess p(argv, env);
  return p.wait(timeout);
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    throw std::runtime_error("bind failed");
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  const auto close_paren = line.rfind(')');
  return close_paren != std::string::npos && close_paren + 2 < line.size() &&
         line[close_paren + 2] != 'Z';
}

std::string binary_path(const std::string& relative) {
  const char* dir = std::getenv("DDP3D_BINARY_DIR");
  if (dir == nullptr) throw std::runtime_error("DDP3D_BINARY_DIR is not set (run through ctest)");
  return std::string(dir) + "/" + relative;
}

std::string source_path(const std::string& relative) {
  const char* dir = std::getenv("DDP3D_SOURCE_DIR");
  return std::string(dir != nullptr ? dir : DDP3D_SOURCE_DIR_DEFAULT) + "/" + relative;
}

}  // namespace ddp3d::testing
