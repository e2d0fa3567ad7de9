#include "worker/launch/launch_options.h"

#include <stdexcept>

namespace ddp3d::launch {
namespace {

int parse_int(const std::string& what, const std::string& text, int min_value, int max_value) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < min_value || value > max_value) {
    throw std::invalid_argument(what + ": '" + text + "' is not an integer in [" +
                                std::to_string(min_value) + ", " + std::to_string(max_value) + "]");
  }
  return static_cast<int>(value);
}

const std::string* lookup(const std::map<std::string, std::string>& env, const char* name) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

}  // namespace

std::string launch_usage() {
  return "usage: ddp3d launch [--nnodes N] [--node-rank R] [--master-addr A] [--master-port P]\n"
         "                    [--nproc-per-node K] [--grace-period S] [--] PROGRAM [ARGS...]\n"
         "  defaults come from NNODES, NODE_RANK, MASTER_ADDR, PORT (or MASTER_PORT) and GPUS\n"
         "  (processes per node; GPUS=0 means one CPU process per node).\n";
}

LaunchOptions parse_launch_options(const std::vector<std::string>& args,
                                   const std::map<std::string, std::string>& environment) {
  LaunchOptions o;
  if (const auto* v = lookup(environment, "NNODES")) o.nnodes = parse_int("NNODES", *v, 1, 1 << 16);
  if (const auto* v = lookup(environment, "NODE_RANK")) {
    o.node_rank = parse_int("NODE_RANK", *v, 0, 1 << 16);
  }
  if (const auto* v = lookup(environment, "MASTER_ADDR")) o.master_addr = *v;
  if (const auto* v = lookup(environment, "MASTER_PORT")) {
    o.master_port = parse_int("MASTER_PORT", *v, 1, 65535);
  }
  // PORT is the seed's name and wins over the torch alias when both are set.
  if (const auto* v = lookup(environment, "PORT")) o.master_port = parse_int("PORT", *v, 1, 65535);
  if (const auto* v = lookup(environment, "GPUS")) {
    o.gpus = parse_int("GPUS", *v, 0, 1024);
    o.nproc_per_node = std::max(o.gpus, 1);
  }

  std::size_t i = 0;
  auto value_of = [&](const std::string& flag) -> const std::string& {
    if (i + 1 >= args.size()) throw std::invalid_argument(flag + " needs a value");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.rfind("--", 0) != 0) break;
    if (a == "--nnodes") {
      o.nnodes = parse_int(a, value_of(a), 1, 1 << 16);
    } else if (a == "--node-rank" || a == "--node_rank") {
      o.node_rank = parse_int(a, value_of(a), 0, 1 << 16);
    } else if (a == "--master-addr" || a == "--master_addr") {
      o.master_addr = value_of(a);
    } else if (a == "--master-port" || a == "--master_port") {
      o.master_port = parse_int(a, value_of(a), 1, 65535);
    } else if (a == "--nproc-per-node" || a == "--nproc_per_node") {
      o.nproc_per_node = parse_int(a, value_of(a), 1, 1024);
    } else if (a == "--grace-period") {
      o.grace_period = std::chrono::seconds(parse_int(a, value_of(a), 0, 3600));
    } else if (a == "--help" || a == "-h") {
      throw std::invalid_argument(launch_usage());
    } else {
      throw std::invalid_argument("unknown flag " + a + "\n" + launch_usage());
    }
  }
  o.command.assign(args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())),
                   args.end());
  if (o.command.empty()) throw std::invalid_argument("no program to launch\n" + launch_usage());
  if (o.node_rank >= o.nnodes) {
    throw std::invalid_argument("NODE_RANK " + std::to_string(o.node_rank) +
                                " must be smaller than NNODES " + std::to_string(o.nnodes));
  }
  if (o.master_addr.empty()) throw std::invalid_argument("MASTER_ADDR is empty");
  return o;
}

std::map<std::string, std::string> rank_environment(const LaunchOptions& o, int local_rank) {
  const int rank = o.node_rank * o.nproc_per_node + local_rank;
  return {
      {"RANK", std::to_string(rank)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
      {"WORLD_SIZE", std::to_string(o.world_size())},
      {"GROUP_RANK", std::to_string(o.node_rank)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(o.master_port)},
      {"NNODES", std::to_string(o.nnodes)},
      {"NODE_RANK", std::to_string(o.node_rank)},
      {"GPUS", std::to_string(o.gpus)},
  };
}

}  // namespace ddp3d::launch
