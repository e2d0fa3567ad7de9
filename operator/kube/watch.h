// A watch that keeps going: reconnects with exponential backoff + jitter when the connection
// drops, resumes from the last resourceVersion seen (events or bookmarks), and calls `relist`
// when the server answers 410 Gone so the caller can rebuild its state and hand back a fresh
// resourceVersion. Runs until the stop token fires.
#pragma once

#include <functional>
#include <mutex>
#include <stop_token>
#include <string>

#include "operator/kube/backoff.h"
#include "operator/kube/client.h"

namespace ddp3d::kube {

class Watcher {
 public:
  using EventHandler = std::function<void(const WatchEvent&)>;  // never sees kBookmark/kError
  // Re-lists and returns the list's resourceVersion; called at start when no resourceVersion
  // is given, and after 410 Gone. Exceptions from it are retried with backoff.
  using RelistHandler = std::function<std::string()>;

  struct Options {
    WatchOptions watch;             // selectors; resource_version = where to start
    Backoff::Options backoff{};     // reconnect delays
    int min_timeout_seconds = 300;  // each stream asks the server to end it after a random
                                    // time in [min, 2*min) so connections are recycled
  };

  Watcher(Client& client, Resource resource, std::string ns, Options options, EventHandler on_event,
          RelistHandler relist);

  // Blocks until `stop` is requested.
  void run(const std::stop_token& stop);

  // The last resourceVersion delivered (event or bookmark).
  std::string resource_version() const;
  // Counters for tests and metrics.
  int reconnects() const;
  int relists() const;

 private:
  Client& client_;
  Resource resource_;
  std::string ns_;
  Options options_;
  EventHandler on_event_;
  RelistHandler relist_;
  mutable std::mutex mu_;
  std::string rv_;
  int reconnects_ = 0;
  int relists_ = 0;
};

}  // namespace ddp3d::kube
