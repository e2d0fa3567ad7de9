#include "operator/kube/watch.h"

#include <random>
#include <thread>

#include "common/log.h"
#include "operator/kube/errors.h"
#include "operator/kube/interruptible_sleep.h"

namespace ddp3d::kube {
using detail::sleep_for;

Watcher::Watcher(Client& client, Resource resource, std::string ns, Options options,
                 EventHandler on_event, RelistHandler relist)
    : client_(client),
      resource_(std::move(resource)),
      ns_(std::move(ns)),
      options_(std::move(options)),
      on_event_(std::move(on_event)),
      relist_(std::move(relist)),
      rv_(options_.watch.resource_version) {}

std::string Watcher::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}
int Watcher::reconnects() const {
  std::lock_guard lock(mu_);
  return reconnects_;
}
int Watcher::relists() const {
  std::lock_guard lock(mu_);
  return relists_;
}

void Watcher::run(const std::stop_token& stop) {
  Backoff backoff(options_.backoff);
  std::mt19937 rng(std::random_device{}());
  const std::string what = "watch " + resource_path(resource_, ns_);
  bool need_list = resource_version().empty();
  while (!stop.stop_requested()) {
    if (need_list) {
      try {
        std::string rv = relist_();
        std::lock_guard lock(mu_);
        rv_ = std::move(rv);
        ++relists_;
        need_list = false;
      } catch (const std::exception& e) {
        const auto delay = backoff.next();
        log::warning(what + ": list failed, retrying in " + std::to_string(delay.count()) +
                     " ms: " + e.what());
        sleep_for(delay, stop);
        continue;
      }
    }
    WatchOptions opts = options_.watch;
    opts.resource_version = resource_version();
    const int min_t = std::max(1, options_.min_timeout_seconds);
    opts.timeout_seconds = std::uniform_int_distribution<int>(min_t, 2 * min_t - 1)(rng);
    bool got_event = false;
    const auto started = std::chrono::steady_clock::now();
    try {
      client_.watch_stream(
          resource_, ns_, opts,
          [&](const WatchEvent& ev) {
            got_event = true;
            const std::string rv = meta_resource_version(ev.object);
            if (ev.type != EventType::kBookmark) on_event_(ev);
            // Advance only after the handler saw the event, so a resume never skips one.
            if (!rv.empty()) {
              std::lock_guard lock(mu_);
              rv_ = rv;
            }
          },
          stop);
      // A clean end (server timeout) resumes right away from the last version, unless the
      // server keeps closing at once: then back off instead of spinning.
      if (got_event || std::chrono::steady_clock::now() - started > std::chrono::seconds(1)) {
        backoff.reset();
      } else {
        sleep_for(backoff.next(), stop);
      }
      continue;
    } catch (const GoneError&) {
      log::info(what + ": resourceVersion " + opts.resource_version + " expired, re-listing");
      need_list = true;
      continue;
    } catch (const std::exception& e) {
      if (stop.stop_requested()) break;
      if (got_event) backoff.reset();  // the connection worked for a while: start low again
      const auto delay = backoff.next();
      {
        std::lock_guard lock(mu_);
        ++reconnects_;
      }
      log::warning(what + ": " + e.what() + "; reconnecting in " + std::to_string(delay.count()) +
                   " ms");
      sleep_for(delay, stop);
    }
  }
}

}  // namespace ddp3d::kube
