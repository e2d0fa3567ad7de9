// `ddp3d check-dist`: joins the process group from the rank environment, all-reduces a known
// tensor and verifies the exact sum on every rank. The first thing to run when a cluster's
// networking is in doubt; the dist tests use it too.
#pragma once

namespace ddp3d::cli {

// argv[0] is "check-dist". Returns the process exit code.
int run_check_dist(int argc, char** argv);

}  // namespace ddp3d::cli
