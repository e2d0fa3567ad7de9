#include "benchmarks/pointpillars/stage_clock.h"

#include <atomic>
#include <cstring>
#include <memory>

namespace ddp3d::bench {
namespace {

std::atomic<std::int64_t> g_assign_ns{0};

struct ScopeStart : at::ObserverContext {
  StageClock::Clock::time_point start = StageClock::Clock::now();
};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (std::strcmp(fn.name(), kAssignScope) != 0) return nullptr;
  return std::make_unique<ScopeStart>();
}

void on_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (ctx == nullptr) return;
  const auto dt = StageClock::Clock::now() - static_cast<ScopeStart*>(ctx)->start;
  g_assign_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(dt).count();
}

}  // namespace

double StageClock::seconds(const std::string& stage) const {
  const auto it = seconds_.find(stage);
  return it == seconds_.end() ? 0.0 : it->second;
}

AssignTimer::AssignTimer()
    : handle_(at::addGlobalCallback(
          at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::USER_SCOPE}))) {
  g_assign_ns = 0;
}

AssignTimer::~AssignTimer() {
  at::removeCallback(handle_);
}

double AssignTimer::take() {
  return 1e-9 * static_cast<double>(g_assign_ns.exchange(0));
}

}  // namespace ddp3d::bench
