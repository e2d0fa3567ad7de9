#include "worker/engine/batch_loader.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ddp3d::engine {
namespace {

// Sample i is {"x": [i, noise]} where noise comes from the passed generator; it records how
// many samples are being/have been loaded.
class CountingDataset : public Dataset {
 public:
  explicit CountingDataset(std::int64_t n, int delay_ms = 0) : n_(n), delay_ms_(delay_ms) {}
  std::int64_t size() const override { return n_; }
  Sample get(std::int64_t index, at::Generator& rng) const override {
    if (index == fail_at_) throw std::runtime_error("bad record");
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    ++loaded_;
    Sample s;
    s.tensors["x"] = at::stack({at::scalar_tensor(static_cast<double>(index), at::kDouble),
                                at::rand({}, rng, at::kDouble)});
    return s;
  }
  std::int64_t fail_at_ = -1;
  mutable std::atomic<int> loaded_{0};

 private:
  std::int64_t n_;
  int delay_ms_;
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
  ASSERT_TRUE(loader.next());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // One consumed + at most 3 queued (no more batches started while the queue is full).
  EXPECT_LE(data->loaded_.load(), 1 + 3);
  EXPECT_GE(data->loaded_.load(), 2);  // but it did load ahead in the background
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
