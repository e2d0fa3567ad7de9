#include "worker/dist/default_process_group.h"

#include <atomic>

namespace ddp3d::dist {
namespace {

// Atomic: set on the main thread, read wherever a forward or backward pass runs.
std::atomic<ProcessGroup*> g_default{nullptr};

}  // namespace

ProcessGroup* default_process_group() {
  return g_default.load();
}

DefaultProcessGroupGuard::DefaultProcessGroupGuard(ProcessGroup* group)
    : previous_(g_default.exchange(group)) {}

DefaultProcessGroupGuard::~DefaultProcessGroupGuard() {
  g_default.store(previous_);
}

}  // namespace ddp3d::dist
