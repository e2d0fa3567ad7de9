#include "worker/dist/dist_env.h"

#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace ddp3d::dist {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

int env_int(const char* name, int fallback, int min_value, int max_value) {
  const auto v = env(name);
  if (!v) return fallback;
  std::size_t used = 0;
  long parsed = 0;
  try {
    parsed = std::stol(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v->size() || parsed < min_value || parsed > max_value) {
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + *v +
                                "' is not an integer in [" + std::to_string(min_value) + ", " +
                                std::to_string(max_value) + "]");
  }
  return static_cast<int>(parsed);
}

// The token is a secret: errors describe it, never print it.
std::string env_token(const char* name) {
  const auto v = env(name);
  if (!v) return "";
  constexpr std::size_t kMaxBytes = 4096;
  if (v->size() > kMaxBytes) {
    throw std::invalid_argument(std::string("environment variable ") + name + " is " +
                                std::to_string(v->size()) + " bytes long (at most " +
                                std::to_string(kMaxBytes) + ")");
  }
  for (const char c : *v) {
    if (c <= ' ' || c == 0x7f) {
      throw std::invalid_argument(std::string("environment variable ") + name +
                                  " holds a space or control character");
    }
  }
  return *v;
}

}  // namespace

DistEnv dist_env_from_environment() {
  DistEnv e;
  e.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 20);
  e.rank = env_int("RANK", 0, 0, e.world_size - 1);
  e.local_world_size = env_int("LOCAL_WORLD_SIZE", 1, 1, e.world_size);
  e.local_rank = env_int("LOCAL_RANK", 0, 0, e.local_world_size - 1);
  e.group_rank = env_int("GROUP_RANK", 0, 0, 1 << 20);
  e.master_addr = env("MASTER_ADDR").value_or("127.0.0.1");
  e.master_port = env_int("MASTER_PORT", env_int("PORT", 29500, 1, 65535), 1, 65535);
  e.gpus = env_int("GPUS", 0, 0, 1024);
  e.rendezvous_token = env_token("DDP3D_RENDEZVOUS_TOKEN");
  e.attempt = env_int("DDP3D_ATTEMPT", -1, 0, 1 << 30);
  e.batch_world_size = batch_world_size_from_environment(e.world_size);
  return e;
}

int batch_world_size_from_environment(int world_size) {
  const int bws = env_int("DDP3D_BATCH_WORLD_SIZE", world_size, 1, 1 << 20);
  if (bws < world_size) {
    throw std::invalid_argument(
        "environment variable DDP3D_BATCH_WORLD_SIZE=" + std::to_string(bws) +
        " is smaller than the world size " + std::to_string(world_size) +
        ": the global batch is defined at DDP3D_BATCH_WORLD_SIZE ranks, and a run may shrink "
        "below it (accumulating micro-batches), not grow past it");
  }
  return bws;
}

}  // namespace ddp3d::dist
