// Loads one epoch's batches in background threads into a bounded queue, so the training step
// does not wait on I/O or augmentation when the loaders keep up. Batches come out in order
// whatever the thread schedule, and each sample's augmentation RNG is seeded from the sample
// (not the thread), so a run is reproducible for any num_workers.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "worker/engine/dataset.h"

namespace ddp3d::engine {

struct BatchLoaderOptions {
  std::int64_t batch_size = 1;
  // Background threads; 0 loads each batch in the caller's thread when it is asked for.
  int num_workers = 0;
  // Batches loaded ahead of the consumer at most (the queue bound); 0: 2 per worker.
  int prefetch = 0;
  bool drop_last = false;
};

// How a BatchLoader's background threads are named in errors and started.
struct LoaderThreads {
  // The setting that asked for them ("train_dataloader.num_workers"), named when they cannot all
  // be started.
  std::string key = "num_workers";
  // Starts one thread running its argument; empty: std::thread. Tests substitute one that fails.
  std::function<std::thread(std::function<void()>)> start;
};

class BatchLoader {
 public:
  // `indices`: this rank's sample order for the epoch. `sample_seed(index)`: the seed of the
  // generator passed to Dataset::get for that sample. When a background thread cannot be started
  // (the process or user is out of threads or memory), the ones already started are stopped and
  // joined and a std::runtime_error names `threads.key` and the count.
  BatchLoader(std::shared_ptr<const Dataset> dataset, std::vector<std::int64_t> indices,
              const BatchLoaderOptions& options,
              std::function<std::uint64_t(std::int64_t)> sample_seed,
              const LoaderThreads& threads = {});
  // Explicit batches: batch k holds the samples `batches[k]` (each non-empty), in order;
  // options.batch_size and drop_last are not used.
  BatchLoader(std::shared_ptr<const Dataset> dataset,
              std::vector<std::vector<std::int64_t>> batches, const BatchLoaderOptions& options,
              std::function<std::uint64_t(std::int64_t)> sample_seed,
              const LoaderThreads& threads = {});
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  std::int64_t num_batches() const { return num_batches_; }
  // The next batch in order, or nullopt after the last. A loader error is rethrown here,
  // naming the sample index that failed.
  std::optional<Batch> next();

 private:
  Batch load(std::int64_t batch_index) const;
  void start(const LoaderThreads& threads);
  // Makes the threads return and joins them.
  void stop();
  void worker_loop();

  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::vector<std::int64_t>> batches_;
  BatchLoaderOptions options_;
  std::function<std::uint64_t(std::int64_t)> sample_seed_;
  std::int64_t num_batches_ = 0;
  std::int64_t capacity_ = 0;

  std::mutex mutex_;
  std::condition_variable cv_;
  std::int64_t next_job_ = 0;  // next batch a worker will load
  std::int64_t next_out_ = 0;  // next batch the consumer takes
  std::map<std::int64_t, Batch> ready_;
  std::exception_ptr error_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ddp3d::engine
