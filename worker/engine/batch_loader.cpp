#include "worker/engine/batch_loader.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>
#include <string>

namespace ddp3d::engine {

BatchLoader::BatchLoader(std::shared_ptr<const Dataset> dataset, std::vector<std::int64_t> indices,
                         const BatchLoaderOptions& options,
                         std::function<std::uint64_t(std::int64_t)> sample_seed,
                         const LoaderThreads& threads)
    : dataset_(std::move(dataset)), options_(options), sample_seed_(std::move(sample_seed)) {
  if (options.batch_size < 1) throw std::invalid_argument("batch_size must be >= 1");
  const auto n = static_cast<std::int64_t>(indices.size());
  const std::int64_t batches = options.drop_last
                                   ? n / options.batch_size
                                   : (n + options.batch_size - 1) / options.batch_size;
  for (std::int64_t b = 0; b < batches; ++b) {
    const auto first = indices.begin() + b * options.batch_size;
    const auto last = indices.begin() + std::min(n, (b + 1) * options.batch_size);
    batches_.emplace_back(first, last);
  }
  start(threads);
}

BatchLoader::BatchLoader(std::shared_ptr<const Dataset> dataset,
                         std::vector<std::vector<std::int64_t>> batches,
                         const BatchLoaderOptions& options,
                         std::function<std::uint64_t(std::int64_t)> sample_seed,
                         const LoaderThreads& threads)
    : dataset_(std::move(dataset)),
      batches_(std::move(batches)),
      options_(options),
      sample_seed_(std::move(sample_seed)) {
  for (const auto& batch : batches_) {
    if (batch.empty()) throw std::invalid_argument("BatchLoader: an empty batch");
  }
  start(threads);
}

void BatchLoader::start(const LoaderThreads& threads) {
  num_batches_ = static_cast<std::int64_t>(batches_.size());
  capacity_ = options_.prefetch > 0 ? options_.prefetch : 2 * std::max(1, options_.num_workers);
  // A constructor that throws runs no destructor: the threads already started must be stopped
  // and joined here, or destroying them joinable calls std::terminate.
  try {
    threads_.reserve(static_cast<std::size_t>(std::max(0, options_.num_workers)));
    for (int i = 0; i < options_.num_workers; ++i) {
      std::function<void()> body = [this] { worker_loop(); };
      threads_.push_back(threads.start ? threads.start(std::move(body))
                                       : std::thread(std::move(body)));
    }
  } catch (const std::exception& e) {
    const std::size_t started = threads_.size();
    stop();
    throw std::runtime_error(threads.key + " = " + std::to_string(options_.num_workers) +
                             ": could not start loader thread " + std::to_string(started + 1) +
                             " (" + e.what() + "); lower " + threads.key +
                             ", or raise the limits on threads and memory (ulimit -u, -v)");
  } catch (...) {
    stop();
    throw;
  }
}

void BatchLoader::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

BatchLoader::~BatchLoader() {
  stop();
}

Batch BatchLoader::load(std::int64_t batch_index) const {
  const std::vector<std::int64_t>& indices = batches_[static_cast<std::size_t>(batch_index)];
  std::vector<Sample> samples;
  samples.reserve(indices.size());
  for (const std::int64_t index : indices) {
    at::Generator rng = at::make_generator<at::CPUGeneratorImpl>(sample_seed_(index));
    try {
      samples.push_back(dataset_->get(index, rng));
    } catch (const std::exception& e) {
      throw std::runtime_error("loading sample " + std::to_string(index) + ": " + e.what());
    }
  }
  return dataset_->collate(samples);
}

void BatchLoader::worker_loop() {
  while (true) {
    std::int64_t job = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Bounded: never more than capacity_ batches ahead of the consumer.
      cv_.wait(lock, [&] {
        return stop_ || error_ || next_job_ >= num_batches_ || next_job_ < next_out_ + capacity_;
      });
      if (stop_ || error_ || next_job_ >= num_batches_) return;
      job = next_job_++;
    }
    try {
      Batch batch = load(job);
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.emplace(job, std::move(batch));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    cv_.notify_all();
  }
}

std::optional<Batch> BatchLoader::next() {
  if (next_out_ >= num_batches_) return std::nullopt;
  if (threads_.empty()) return load(next_out_++);
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return error_ || ready_.count(next_out_) != 0; });
  if (ready_.count(next_out_) == 0) std::rethrow_exception(error_);
  Batch batch = std::move(ready_.at(next_out_));
  ready_.erase(next_out_);
  ++next_out_;
  lock.unlock();
  cv_.notify_all();
  return batch;
}

}  // namespace ddp3d::engine
