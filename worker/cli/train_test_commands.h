// `ddp3d train` and `ddp3d test` entry points (argv excludes "ddp3d" and includes the
// subcommand name at argv[0]). Return the process exit code: 0 ok, 2 usage or config error,
// 1 anything else.
#pragma once

namespace ddp3d::cli {

int run_train(int argc, char** argv);
int run_test(int argc, char** argv);

}  // namespace ddp3d::cli
