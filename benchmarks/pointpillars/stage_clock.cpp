#include "benchmarks/pointpillars/stage_clock.h"

#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>

namespace ddp3d::bench {
namespace {

std::mutex g_mu;
Span g_assign;

struct ScopeStart : at::ObserverContext {
  Mark start;
};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (std::strcmp(fn.name(), kAssignScope) != 0) return nullptr;
  return std::make_unique<ScopeStart>();
}

void on_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (ctx == nullptr) return;
  const Span s = since(static_cast<ScopeStart*>(ctx)->start);
  const std::lock_guard<std::mutex> lock(g_mu);
  g_assign.wall += s.wall;
  g_assign.cpu += s.cpu;
}

}  // namespace

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Span since(const Mark& m) {
  return {std::chrono::duration<double>(Clock::now() - m.wall).count(), thread_cpu_s() - m.cpu};
}

void StageClock::add(const std::string& stage, const Span& s) {
  Span& t = spans_[stage];
  t.wall += s.wall;
  t.cpu += s.cpu;
}

void StageClock::add_wall(const std::string& stage, double wall_s) {
  spans_[stage].wall += wall_s;
}

Span StageClock::total(const std::string& stage) const {
  const auto it = spans_.find(stage);
  return it == spans_.end() ? Span{} : it->second;
}

AssignTimer::AssignTimer()
    : handle_(at::addGlobalCallback(
          at::RecordFunctionCallback(on_start, on_end).scopes({at::RecordScope::USER_SCOPE}))) {
  take();
}

AssignTimer::~AssignTimer() {
  at::removeCallback(handle_);
}

Span AssignTimer::take() {
  const std::lock_guard<std::mutex> lock(g_mu);
  const Span s = g_assign;
  g_assign = {};
  return s;
}

}  // namespace ddp3d::bench
