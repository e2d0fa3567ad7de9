// The per-rank environment contract set by `ddp3d launch` (and torchrun): RANK, LOCAL_RANK,
// LOCAL_WORLD_SIZE, WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, and the rendezvous token.
#pragma once

#include <string>

namespace ddp3d::dist {

struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int group_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // GPUS from the seed's contract: processes per node that each own a GPU; 0 = CPU only.
  int gpus = 0;
  // DDP3D_RENDEZVOUS_TOKEN: the job's rendezvous secret (rendezvous_auth.h); empty = none.
  std::string rendezvous_token;
  // DDP3D_ATTEMPT: the operator's restart attempt, -1 when unset (bare metal). Every key of
  // the rendezvous lives under it, so a rank left over from an earlier attempt (a pod on a
  // lost node that still runs) can never be counted in, or disturb, a later attempt's.
  int attempt = -1;
  // DDP3D_BATCH_WORLD_SIZE: the world size the global batch is defined at (the job's full
  // size; a restart at fewer ranks accumulates micro-batches to keep it). Defaults to
  // world_size; never below it.
  int batch_world_size = 1;
};

// Reads the contract from the environment. With no RANK/WORLD_SIZE at all (launcher
// "none") it describes a single process. Missing or malformed variables throw
// std::invalid_argument naming the variable and its value.
DistEnv dist_env_from_environment();

// DDP3D_BATCH_WORLD_SIZE, or `world_size` when unset. Throws std::invalid_argument naming the
// variable when it is malformed or smaller than `world_size` (a run may shrink below the batch
// world size, not grow past it).
int batch_world_size_from_environment(int world_size);

}  // namespace ddp3d::dist
