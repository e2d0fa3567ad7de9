#include "worker/engine/batch_loader.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

namespace ddp3d::engine {
namespace {

// Sample i is {"x": [i, noise]} where noise comes from the passed generator. It counts the
// loads, and how far the loads ran ahead of the batches the test says it has taken.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(std::int64_t n) : n_(n) {}
  std::int64_t size() const override { return n_; }
  Sample get(std::int64_t index, at::Generator& rng) const override {
    if (index == fail_at_) throw std::runtime_error("bad record");
    {
      std::lock_guard lock(mutex_);
      ++started_;
      most_ahead_ = std::max(most_ahead_, started_ - taken_);
    }
    Sample s;
    s.tensors["x"] = at::stack({at::scalar_tensor(static_cast<double>(index), at::kDouble),
                                at::rand({}, rng, at::kDouble)});
    {
      std::lock_guard lock(mutex_);
      ++loaded_;
    }
    changed_.notify_all();
    return s;
  }
  // Call before each next(): the loader's own count is then never more than this.
  void set_taken(int n) {
    std::lock_guard lock(mutex_);
    taken_ = n;
  }
  bool wait_until_loaded(int n, std::chrono::seconds deadline) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, deadline, [&] { return loaded_ >= n; });
  }
  int most_ahead() const {
    std::lock_guard lock(mutex_);
    return most_ahead_;
  }
  std::int64_t fail_at_ = -1;

 private:
  std::int64_t n_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable int started_ = 0;
  mutable int loaded_ = 0;
  mutable int most_ahead_ = 0;
  int taken_ = 0;
};

std::vector<at::Tensor> drain(BatchLoader& loader) {
  std::vector<at::Tensor> out;
  while (auto b = loader.next()) out.push_back(b->get("x"));
  return out;
}

TEST(BatchLoader, InOrderAndIdenticalForAnyWorkerCount) {
  auto data = std::make_shared<CountingDataset>(10);
  const std::vector<std::int64_t> order = {9, 3, 5, 0, 1, 2, 4, 6, 7};
  auto seed = [](std::int64_t i) { return static_cast<std::uint64_t>(100 + i); };
  BatchLoader inline_loader(data, order, {4, 0, 0, false}, seed);
  BatchLoader threaded(data, order, {4, 3, 0, false}, seed);
  EXPECT_EQ(inline_loader.num_batches(), 3);
  const auto a = drain(inline_loader);
  const auto b = drain(threaded);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << i;
  EXPECT_EQ(a[0].size(0), 4);
  EXPECT_EQ(a[0][0][0].item<double>(), 9);
  EXPECT_EQ(a[2].size(0), 1);  // the short last batch is kept without drop_last
}

TEST(BatchLoader, DropLastDropsTheShortBatch) {
  auto data = std::make_shared<CountingDataset>(10);
  BatchLoader loader(data, {0, 1, 2, 3, 4}, {2, 1, 0, true}, [](std::int64_t) { return 0ULL; });
  EXPECT_EQ(loader.num_batches(), 2);
  EXPECT_EQ(drain(loader).size(), 2u);
}

TEST(BatchLoader, PrefetchIsBoundedAheadOfTheConsumer) {
  auto data = std::make_shared<CountingDataset>(100);
  std::vector<std::int64_t> order(100);
  for (int i = 0; i < 100; ++i) order[i] = i;
  BatchLoader loader(data, order, {1, 2, /*prefetch=*/3, false}, [](std::int64_t) { return 0ULL; });
  data->set_taken(1);
  ASSERT_TRUE(loader.next());
  // It loads ahead in the background until 3 batches wait...
  ASSERT_TRUE(data->wait_until_loaded(1 + 3, std::chrono::seconds(30)));
  // ...and, batch after batch, never starts one more than 3 ahead of the consumer.
  for (int taken = 2; taken <= 100; ++taken) {
    data->set_taken(taken);
    ASSERT_TRUE(loader.next());
  }
  EXPECT_FALSE(loader.next());
  EXPECT_EQ(data->most_ahead(), 3);
}

TEST(BatchLoader, ErrorsNameTheSample) {
  auto data = std::make_shared<CountingDataset>(10);
  data->fail_at_ = 6;
  BatchLoader loader(data, {0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 0, false},
                     [](std::int64_t) { return 0ULL; });
  try {
    drain(loader);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("sample 6"), std::string::npos) << e.what();
  }
}

TEST(BatchLoader, AThreadThatCannotStartIsAnErrorNamingTheKeyNotTerminate) {
  // Three threads start, the fourth fails as std::thread does when the process is out of
  // threads. Before, the started ones were destroyed joinable: std::terminate.
  auto data = std::make_shared<CountingDataset>(64);
  std::vector<std::int64_t> order(64);
  for (int i = 0; i < 64; ++i) order[i] = i;
  std::atomic<int> started{0}, returned{0};
  LoaderThreads threads;
  threads.key = "train_dataloader.num_workers";
  threads.start = [&](std::function<void()> body) {
    if (started == 3) throw std::system_error(EAGAIN, std::generic_category(), "pthread_create");
    ++started;
    return std::thread([&returned, body = std::move(body)] {
      body();
      ++returned;
    });
  };
  try {
    BatchLoader loader(
        data, order, {1, 8, 0, false}, [](std::int64_t) { return 0ULL; }, threads);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("train_dataloader.num_workers = 8: could not start loader thread 4"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("pthread_create"), std::string::npos) << m;
  }
  // The three that started were told to stop and joined before the error left the constructor.
  EXPECT_EQ(returned, 3);
}

TEST(Collate, StacksAndListsAndNamesMismatches) {
  Sample a;
  a.tensors["img"] = at::zeros({2});
  a.tensors["pts"] = at::zeros({3, 4});
  Sample b;
  b.tensors["img"] = at::ones({2});
  b.tensors["pts"] = at::ones({5, 4});
  const Batch batch = collate_samples({a, b}, {"pts"});
  EXPECT_EQ(batch.size, 2);
  EXPECT_EQ(batch.get("img").sizes(), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(batch.list("pts")[1].size(0), 5);
  try {
    collate_samples({a, b}, {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'pts'"), std::string::npos) << e.what();
  }
  try {
    batch.get("nope");
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
}

}  // namespace
}  // namespace ddp3d::engine
