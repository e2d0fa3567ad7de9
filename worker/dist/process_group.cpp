#include "worker/dist/process_group.h"

#include <ATen/ATen.h>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef DDP3D_WITH_CUDA
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/log.h"
#include "worker/dist/peer_heartbeat.h"
#include "worker/dist/rendezvous_auth.h"
#include "worker/dist/shm_allreduce.h"

namespace ddp3d::dist {

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;
  // Several nodes: the ranks with this rank's local rank, one per node (shm's inter-node sum).
  c10::intrusive_ptr<c10d::Backend> across_nodes;
  std::unique_ptr<SharedMemoryAllReduce> shm;
  // After `store`, so it stops before rank 0's store server goes.
  std::unique_ptr<PeerHeartbeat> heartbeat;
};

ProcessGroup::ProcessGroup(int rank, int size, BackendKind kind, std::unique_ptr<Impl> impl)
    : rank_(rank), size_(size), kind_(kind), impl_(std::move(impl)) {}

ProcessGroup::~ProcessGroup() = default;

c10d::Backend& ProcessGroup::backend() {
  return *impl_->backend;
}

SharedMemoryAllReduce* ProcessGroup::shared_memory_allreduce() {
  return impl_->shm.get();
}

void ProcessGroup::barrier() {
  // A tiny all-reduce rather than Backend::barrier(): Gloo's barrier does not honour the
  // CUDA stream semantics NCCL needs, and this works identically on both.
  std::vector<at::Tensor> t{at::zeros({1}, kind_ == BackendKind::kNccl
                                               ? at::TensorOptions().device(at::kCUDA)
                                               : at::TensorOptions())};
  impl_->backend->allreduce(t)->wait();
}

void ProcessGroup::finish() {
  barrier();
  if (impl_->heartbeat) impl_->heartbeat->leave();
}

BackendKind parse_backend(const std::string& name) {
  if (name == "gloo") return BackendKind::kGloo;
  if (name == "nccl") return BackendKind::kNccl;
  throw std::invalid_argument("unknown distributed backend '" + name + "' (expected gloo or nccl)");
}

std::string backend_name(BackendKind kind) {
  return kind == BackendKind::kNccl ? "nccl" : "gloo";
}

namespace {

std::string endpoint(const DistEnv& env) {
  return env.master_addr + ":" + std::to_string(env.master_port);
}

std::string seconds(std::chrono::milliseconds d) {
  std::ostringstream out;
  out << std::chrono::duration<double>(d).count() << " s";
  return out.str();
}

c10::intrusive_ptr<c10d::Store> connect_store(const DistEnv& env,
                                              const ProcessGroupOptions& options) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(env.master_port);
  opts.isServer = env.rank == 0;
  opts.numWorkers = env.world_size;
  opts.waitWorkers = false;  // joining is checked below, with our own message
  opts.timeout = options.timeout;
  try {
    c10::intrusive_ptr<c10d::Store> store =
        c10::make_intrusive<c10d::TCPStore>(env.master_addr, opts);
    // One key space per attempt: a rank of another attempt that reaches this store joins
    // nothing here and times out on its own.
    if (env.attempt >= 0) {
      store = c10::make_intrusive<c10d::PrefixStore>("ddp3d/attempt-" + std::to_string(env.attempt),
                                                     std::move(store));
    }
    // Every rank announces itself and waits for all: a missing rank fails here, not in the
    // first collective.
    store->add("ddp3d/joined", 1);
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    while (store->add("ddp3d/joined", 0) < env.world_size) {
      if (std::chrono::steady_clock::now() > deadline) {
        throw std::runtime_error("only " + std::to_string(store->add("ddp3d/joined", 0)) + " of " +
                                 std::to_string(env.world_size) + " ranks joined");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return store;
  } catch (const std::exception& e) {
    // c10 errors carry a C++ backtrace in what(); the first line is the message.
    const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
    const std::string reason = c10_error ? c10_error->what_without_backtrace() : e.what();
    throw std::runtime_error("rendezvous at MASTER_ADDR:MASTER_PORT=" + endpoint(env) +
                             " did not complete within " + seconds(options.timeout) + " (rank " +
                             std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                             (env.attempt >= 0 ? ", attempt " + std::to_string(env.attempt) : "") +
                             "): " + reason.substr(0, reason.find('\n')));
  }
}

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

c10::intrusive_ptr<c10d::Backend> make_gloo(const c10::intrusive_ptr<c10d::Store>& store,
                                            const std::string& prefix, int rank, int size,
                                            const DistEnv& env,
                                            const ProcessGroupOptions& options) {
  auto opts = c10d::ProcessGroupGloo::Options::create(options.timeout);
  // Same choice as torch: GLOO_SOCKET_IFNAME wins; on a single machine use loopback so the
  // ranks never depend on the host name resolving.
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
  } else if (is_loopback(env.master_addr)) {
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
  return c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, rank, size, opts);
}

// Ranks laid out as `ddp3d launch` and torchrun place them: LOCAL_WORLD_SIZE ranks per node,
// RANK = GROUP_RANK * LOCAL_WORLD_SIZE + LOCAL_RANK. Only then does the hierarchical
// all-reduce know which ranks share a node.
bool uniform_nodes(const DistEnv& env) {
  return env.local_world_size > 1 && env.world_size % env.local_world_size == 0 &&
         env.rank == env.group_rank * env.local_world_size + env.local_rank;
}

// True on every rank when `ok` is true on every rank (through the store).
bool all_ranks_agree(c10d::Store& store, const DistEnv& env, bool ok, std::string& why) {
  store.set("ddp3d/shm/agree/" + std::to_string(env.rank),
            std::vector<std::uint8_t>{static_cast<std::uint8_t>(ok ? 1 : 0)});
  bool all = true;
  for (int r = 0; r < env.world_size; ++r) {
    if (store.get("ddp3d/shm/agree/" + std::to_string(r)).at(0) == 0) {
      if (all && why.empty()) why = "rank " + std::to_string(r) + " has no shared-memory group";
      all = false;
    }
  }
  return all;
}

// The node-local shared-memory all-reduce; on several nodes also a Gloo group per local rank
// across the nodes, which sums each rank's part between nodes. Every rank reaches the same
// verdict, so either all use it for gradients or none does.
void connect_shared_memory(ProcessGroup::Impl& impl, const DistEnv& env,
                           const ProcessGroupOptions& options) {
  const bool one_node = env.local_world_size == env.world_size;
  if (!one_node && !uniform_nodes(env)) {
    if (env.rank == 0) {
      log::warning(
          "shared-memory all-reduce unavailable: ranks are not laid out LOCAL_WORLD_SIZE per "
          "node (RANK = GROUP_RANK * LOCAL_WORLD_SIZE + LOCAL_RANK); gradients go through gloo");
    }
    return;
  }
  const int nodes = env.world_size / env.local_world_size;
  SharedMemoryAllReduce::Options opts;
  opts.timeout = options.timeout;
  opts.slot_bytes = SharedMemoryAllReduce::default_slot_bytes(env.local_world_size);
  opts.store_prefix = "ddp3d/shm/node" + std::to_string(env.group_rank) + "/";
  std::string why;
  auto shm =
      SharedMemoryAllReduce::connect(*impl.store, env.local_rank, env.local_world_size, opts, &why);
  if (!one_node && !all_ranks_agree(*impl.store, env, shm != nullptr, why)) shm.reset();
  if (!shm) {
    log::warning("shared-memory all-reduce unavailable, gradients go through gloo: " + why);
    return;
  }
  if (nodes > 1) {
    impl.across_nodes =
        make_gloo(impl.store, "ddp3d/across/" + std::to_string(env.local_rank) + "/",
                  env.group_rank, nodes, env, options);
    shm->set_inter_node_sum(
        [across = impl.across_nodes](at::Tensor& part) {
          std::vector<at::Tensor> t{part};
          across->allreduce(t)->wait();
        },
        nodes);
  }
  if (env.rank == 0) {
    log::info("gradient all-reduce through shared memory (" + std::to_string(env.local_world_size) +
              " local ranks, " + std::to_string(shm->segment_bytes() >> 20) + " MiB segment" +
              (nodes > 1 ? "; gloo between " + std::to_string(nodes) + " nodes" : "") + ")");
  }
  impl.shm = std::move(shm);
}

}  // namespace

std::unique_ptr<ProcessGroup> init_process_group(const DistEnv& env,
                                                 const ProcessGroupOptions& options) {
  log::info("rendezvous at " + endpoint(env) + " as rank " + std::to_string(env.rank) + "/" +
            std::to_string(env.world_size) + " (" + backend_name(options.backend) + ", timeout " +
            seconds(options.timeout) + ", heartbeat " +
            (options.heartbeat.enabled()
                 ? "every " + seconds(options.heartbeat.interval) + ", peers lost after " +
                       seconds(options.heartbeat.timeout)
                 : std::string("off")) +
            ")");
  auto impl = std::make_unique<ProcessGroup::Impl>();
  auto store = connect_store(env, options);
  const std::string key_prefix =
      authenticate_rendezvous(*store, env, env.rendezvous_token, options.timeout);
  if (key_prefix.empty()) {
    impl->store = std::move(store);
  } else {
    impl->store = c10::make_intrusive<c10d::PrefixStore>(key_prefix, std::move(store));
    if (env.rank == 0) log::info("rendezvous authenticated: every rank holds the job's token");
  }
  if (options.heartbeat.enabled() && env.world_size > 1) {
    // A connection of its own (under the same key prefix), whose requests time out like a
    // heartbeat does.
    auto beat_store = impl->store->clone();
    beat_store->setTimeout(options.heartbeat.timeout);
    HeartbeatOptions heartbeat = options.heartbeat;
    heartbeat.first_round_together = true;
    impl->heartbeat = std::make_unique<PeerHeartbeat>(beat_store, env.rank, env.world_size,
                                                      heartbeat, endpoint(env));
  }
  if (options.backend == BackendKind::kNccl) {
#ifdef DDP3D_WITH_CUDA
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = options.timeout;
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("nccl/", impl->store);
    impl->backend =
        c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, env.rank, env.world_size, opts);
#else
    throw std::runtime_error("backend nccl requested but this ddp3d was built without CUDA");
#endif
  } else {
    impl->backend = make_gloo(impl->store, "gloo/", env.rank, env.world_size, env, options);
    if (options.shared_memory_allreduce && env.world_size > 1 && env.local_world_size > 1) {
      connect_shared_memory(*impl, env, options);
    }
  }
  return std::unique_ptr<ProcessGroup>(
      new ProcessGroup(env.rank, env.world_size, options.backend, std::move(impl)));
}

}  // namespace ddp3d::dist
