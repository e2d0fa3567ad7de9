#include "rank_spawner.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ddp3d::test {

bool SpawnResult::all_succeeded() const {
  for (const auto& r : ranks) {
    if (r.exit_code != 0) return false;
  }
  return !ranks.empty();
}

std::string SpawnResult::describe() const {
  std::ostringstream s;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    s << "--- rank " << r << ": exit " << ranks[r].exit_code << " signal " << ranks[r].signal
      << (ranks[r].killed ? " (killed)" : "") << "\n"
      << ranks[r].output << "\n";
  }
  return s.str();
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("could not bind a free port on 127.0.0.1");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string make_temp_dir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
  return tmpl;
}

SpawnResult spawn_ranks(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("spawn_ranks: empty argv");
  const std::string dir =
      options.work_dir.empty() ? make_temp_dir("ddp3d-ranks-") : options.work_dir;
  const int port = free_port();
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  for (int r = 0; r < options.world_size; ++r) {
    logs.push_back(dir + "/rank" + std::to_string(r) + ".log");
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::setpgid(0, 0);
      const int fd = ::open(logs.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      const int local =
          options.local_world_size > 0 ? options.local_world_size : options.world_size;
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r % local).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(options.world_size).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(local).c_str(), 1);
      ::setenv("GROUP_RANK", std::to_string(r / local).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("OMP_NUM_THREADS", "1", 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    pids.push_back(pid);
  }

  SpawnResult result;
  result.ranks.resize(pids.size());
  std::vector<bool> done(pids.size(), false);
  std::size_t remaining = pids.size();
  auto deadline = start + options.timeout;
  bool failure_seen = false;
  while (remaining > 0) {
    for (std::size_t r = 0; r < pids.size(); ++r) {
      if (done[r]) continue;
      int status = 0;
      if (::waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        done[r] = true;
        --remaining;
        if (WIFEXITED(status)) {
          result.ranks[r].exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          result.ranks[r].signal = WTERMSIG(status);
        }
        if (result.ranks[r].exit_code != 0 && !failure_seen) {
          failure_seen = true;
          deadline =
              std::min(deadline, std::chrono::steady_clock::now() + options.grace_after_failure);
        }
      }
    }
    if (remaining == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (std::size_t r = 0; r < pids.size(); ++r) {
        if (done[r]) continue;
        ::kill(-pids[r], SIGKILL);
        ::kill(pids[r], SIGKILL);
        ::waitpid(pids[r], nullptr, 0);
        result.ranks[r].killed = true;
        result.ranks[r].signal = SIGKILL;
        done[r] = true;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t r = 0; r < pids.size(); ++r) {
    std::ifstream in(logs[r]);
    std::stringstream ss;
    ss << in.rdbuf();
    result.ranks[r].output = ss.str();
  }
  return result;
}

}  // namespace ddp3d::test
