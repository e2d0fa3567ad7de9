// ddp3d: the worker binary. Subcommands: launch, train, test, data.
#include <cstdio>
#include <string_view>

#include "worker/launch/launcher.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "launch") {
    return ddp3d::launch::run_launch(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "usage: ddp3d {launch|train|test|data} ...\n");
  return 2;
}
