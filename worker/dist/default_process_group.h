// The process-wide default process group, like torch.distributed's default group: the group
// that parts needing one deep inside a model (SyncBatchNorm's forward and backward) use when
// they were not given one explicitly. The runner sets it right after init_process_group, for
// as long as the group lives (worker/engine/session.cpp); when it is unset there is one
// process (world size 1).
#pragma once

namespace ddp3d::dist {

class ProcessGroup;

// The current default group, or nullptr when none is set (one process).
ProcessGroup* default_process_group();

// Makes `group` the default for the guard's lifetime and restores the previous one after
// (nullptr clears it). Create it after the group and destroy it before: the default never
// points at a destroyed group.
class DefaultProcessGroupGuard {
 public:
  explicit DefaultProcessGroupGuard(ProcessGroup* group);
  ~DefaultProcessGroupGuard();
  DefaultProcessGroupGuard(const DefaultProcessGroupGuard&) = delete;
  DefaultProcessGroupGuard& operator=(const DefaultProcessGroupGuard&) = delete;

 private:
  ProcessGroup* previous_;
};

}  // namespace ddp3d::dist
