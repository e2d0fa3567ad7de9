// The progress probe: a thread of its own that, every interval, GETs /metrics of every
// Running pod of every active TrainingJob (probe/metrics_fetch.h, bounded), parses the
// progress series (controller/progress_metrics.h) and keeps each pod's latest scrape. When a
// pod's scrape changes (a new step, an error or a recovery) it tells the controller, which
// requeues the job; the reconcile reads the scrapes as observed state. The reconcile workers
// never wait for a pod.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "operator/controller/observed.h"
#include "operator/probe/metrics_fetch.h"

namespace ddp3d::op::probe {

struct ProbeTarget {
  std::string job_key;  // "namespace/name" of the TrainingJob
  std::string pod_uid;
  std::string pod_ip;
  int port = 0;
};

struct ProbeOptions {
  std::chrono::seconds interval{15};  // between the starts of two rounds
  FetchLimits limits;
  int parallel = 8;  // scrapes in flight at once
};

class ProgressProbe {
 public:
  using Targets = std::function<std::vector<ProbeTarget>()>;
  using Changed = std::function<void(const std::string& job_key)>;

  ProgressProbe(ProbeOptions options, Targets targets, Changed changed);
  ~ProgressProbe();  // stop()
  ProgressProbe(const ProgressProbe&) = delete;
  ProgressProbe& operator=(const ProgressProbe&) = delete;

  void start();
  void stop();  // idempotent; joins the thread (a round in flight ends within one timeout)

  // The pod's latest scrape, while it is still a target.
  std::optional<controller::ProgressScrape> latest(const std::string& pod_uid) const;

 private:
  void loop(const std::stop_token& stop);
  void round(const std::stop_token& stop);

  ProbeOptions options_;
  Targets targets_;
  Changed changed_;
  mutable std::mutex mu_;
  std::map<std::string, controller::ProgressScrape> latest_;  // by pod uid
  std::condition_variable_any wake_;
  std::jthread thread_;
};

}  // namespace ddp3d::op::probe
