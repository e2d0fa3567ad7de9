// `ddp3d launch`: spawns one process per local rank with the rank environment, forwards
// SIGTERM/SIGINT/SIGHUP to them, and when one rank fails stops the others (SIGTERM, then
// SIGKILL after the grace period) and exits with the failed rank's code, naming it. A rank
// that stopped because a peer was lost exits exit_code::kPeerLost (200), and so does the
// launcher when that rank was the first to stop.
#pragma once

namespace ddp3d::launch {

// argv[0] is "launch". Returns the process exit code.
int run_launch(int argc, char** argv);

}  // namespace ddp3d::launch
