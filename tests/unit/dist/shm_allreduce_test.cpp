// The shared-memory all-reduce with its ranks as threads of one process (an in-process
// store for the rendezvous); the same segment protocol as across processes, which
// tests/dist/ddp covers.
#include "worker/dist/shm_allreduce.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

namespace {

using ddp3d::dist::SharedMemoryAllReduce;

SharedMemoryAllReduce::Options small_slots(std::size_t slot_bytes = 4096) {
  SharedMemoryAllReduce::Options o;
  o.slot_bytes = slot_bytes;
  o.timeout = std::chrono::seconds(20);
  return o;
}

// Runs body(rank, group) on `world` threads, each with its own connection.
void on_ranks(int world, const SharedMemoryAllReduce::Options& options,
              const std::function<void(int, SharedMemoryAllReduce&)>& body) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        std::string why;
        auto group = SharedMemoryAllReduce::connect(*store, r, world, options, &why);
        if (!group) throw std::runtime_error("connect failed: " + why);
        body(r, *group);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
  }
}

at::Tensor input_of(int rank, std::int64_t n, at::ScalarType dtype) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(77 + rank);
  return at::randn({n}, gen, at::TensorOptions().dtype(dtype));
}

// The expected result, summed in rank order as the owner of each part sums it: bit-exact.
at::Tensor expected(int world, std::int64_t n, at::ScalarType dtype, std::int64_t average) {
  auto sum = input_of(0, n, dtype) + input_of(1, n, dtype);
  for (int r = 2; r < world; ++r) sum += input_of(r, n, dtype);
  const auto k = std::min(average, n);
  if (k > 0) sum.narrow(0, 0, k).mul_(1.0 / world);
  return sum;
}

struct Case {
  int world;
  std::int64_t numel;
  at::ScalarType dtype;
  std::int64_t average;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << "world " << c.world << ", " << c.numel << " " << c10::toString(c.dtype) << ", average "
      << c.average;
}

class ShmAllReduceSums : public ::testing::TestWithParam<Case> {};

TEST_P(ShmAllReduceSums, EveryRankGetsTheExactSumAndAverage) {
  const Case c = GetParam();
  std::vector<at::Tensor> results(static_cast<std::size_t>(c.world));
  on_ranks(c.world, small_slots(), [&](int rank, SharedMemoryAllReduce& group) {
    auto t = input_of(rank, c.numel, c.dtype);
    group.allreduce(t, c.average)->wait();
    results[static_cast<std::size_t>(rank)] = t;
  });
  const auto want = expected(c.world, c.numel, c.dtype, c.average);
  for (int r = 0; r < c.world; ++r) {
    ASSERT_TRUE(results[static_cast<std::size_t>(r)].defined());
    EXPECT_TRUE(at::equal(results[static_cast<std::size_t>(r)], want))
        << "rank " << r << " max diff "
        << (results[static_cast<std::size_t>(r)] - want).abs().max().item<double>();
  }
}

// 4096-byte slots: 1024 floats, so 5000 elements go through in several double-buffered
// pieces, and 7 elements leave most ranks' parts empty.
INSTANTIATE_TEST_SUITE_P(
    Sizes, ShmAllReduceSums,
    ::testing::Values(Case{2, 1000, at::kFloat, 1000}, Case{2, 5000, at::kFloat, 3000},
                      Case{3, 5000, at::kFloat, 0}, Case{4, 7, at::kFloat, 7},
                      Case{3, 4099, at::kDouble, 4099}, Case{2, 1, at::kDouble, 0}),
    [](const auto& info) {
      const Case& c = info.param;
      return "world" + std::to_string(c.world) + "_n" + std::to_string(c.numel) + "_" +
             (c.dtype == at::kFloat ? "float" : "double") + "_avg" + std::to_string(c.average);
    });

// Tensors allocated in shared memory are reduced where they lie (no copy through the
// slots), with the same exact result; a private tensor still goes through the slots.
TEST(ShmAllReduce, SharedTensorsAreReducedInPlaceExactly) {
  const int world = 3;
  std::vector<std::vector<at::Tensor>> results(world);
  std::vector<std::int64_t> in_place(world);
  on_ranks(world, small_slots(), [&](int rank, SharedMemoryAllReduce& group) {
    auto shared = group.allocate_shared({{5000, at::kFloat}, {7, at::kDouble}, {1, at::kFloat}});
    ASSERT_EQ(shared.size(), 3u);
    EXPECT_TRUE(at::equal(shared[0], at::zeros({5000})));  // zero-filled
    shared[0].copy_(input_of(rank, 5000, at::kFloat));
    shared[1].copy_(input_of(rank, 7, at::kDouble));
    shared[2].copy_(input_of(rank, 1, at::kFloat));
    auto priv = input_of(rank, 5000, at::kFloat);
    std::vector<std::shared_ptr<ddp3d::dist::ShmAllReduceWork>> works{
        group.allreduce(shared[0], 3000), group.allreduce(priv, 3000),
        group.allreduce(shared[1], 7), group.allreduce(shared[2], 0)};
    for (auto& w : works) w->wait();
    results[static_cast<std::size_t>(rank)] = {shared[0].clone(), priv, shared[1].clone(),
                                               shared[2].clone()};
    in_place[static_cast<std::size_t>(rank)] = group.in_place_allreduces();
  });
  for (int r = 0; r < world; ++r) {
    const auto& got = results[static_cast<std::size_t>(r)];
    ASSERT_EQ(got.size(), 4u);
    EXPECT_TRUE(at::equal(got[0], expected(world, 5000, at::kFloat, 3000))) << "rank " << r;
    EXPECT_TRUE(at::equal(got[1], expected(world, 5000, at::kFloat, 3000))) << "rank " << r;
    EXPECT_TRUE(at::equal(got[2], expected(world, 7, at::kDouble, 7))) << "rank " << r;
    EXPECT_TRUE(at::equal(got[3], expected(world, 1, at::kFloat, 0))) << "rank " << r;
    EXPECT_EQ(in_place[static_cast<std::size_t>(r)], 3) << "rank " << r;
  }
}

// Shared tensors that are gone are forgotten: reduce, free and allocate again several times
// (the new mappings may reuse the old addresses), with private tensors in between.
TEST(ShmAllReduce, FreedSharedTensorsAreForgotten) {
  on_ranks(2, small_slots(), [&](int rank, SharedMemoryAllReduce& group) {
    for (int round = 0; round < 4; ++round) {
      std::int64_t before = group.in_place_allreduces();
      {
        auto shared = group.allocate_shared({{3000, at::kFloat}});
        shared[0].copy_(input_of(rank, 3000, at::kFloat));
        group.allreduce(shared[0], 0)->wait();
        ASSERT_TRUE(at::equal(shared[0], expected(2, 3000, at::kFloat, 0))) << round;
      }
      EXPECT_EQ(group.in_place_allreduces(), before + 1);
      auto priv = input_of(rank, 3000, at::kFloat);
      group.allreduce(priv, 0)->wait();
      ASSERT_TRUE(at::equal(priv, expected(2, 3000, at::kFloat, 0))) << round;
      EXPECT_EQ(group.in_place_allreduces(), before + 1) << "a private tensor went in place";
    }
  });
}

TEST(ShmAllReduce, ManyQueuedAllReducesCompleteInOrder) {
  // 20 asynchronous all-reduces issued before any is waited for, alternating sizes.
  on_ranks(3, small_slots(), [&](int rank, SharedMemoryAllReduce& group) {
    std::vector<at::Tensor> ts;
    std::vector<std::shared_ptr<ddp3d::dist::ShmAllReduceWork>> works;
    for (int k = 0; k < 20; ++k) {
      ts.push_back(at::full({k % 2 ? 3000 : 10}, static_cast<float>(k * 10 + rank)));
      works.push_back(group.allreduce(ts.back(), 0));
    }
    for (int k = 0; k < 20; ++k) {
      works[static_cast<std::size_t>(k)]->wait();
      // (10k + 0) + (10k + 1) + (10k + 2)
      ASSERT_TRUE(at::equal(ts[static_cast<std::size_t>(k)],
                            at::full_like(ts[static_cast<std::size_t>(k)], 30.0f * k + 3.0f)))
          << "all-reduce " << k;
    }
  });
}

TEST(ShmAllReduce, DifferentSizesOnTheRanksFailOnEveryRankNamingBoth) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto group = SharedMemoryAllReduce::connect(*store, r, 2, small_slots());
      auto t = at::ones({r == 0 ? 100 : 99});
      try {
        group->allreduce(t, 0)->wait();
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[static_cast<std::size_t>(r)].find("100 Float"), std::string::npos)
        << errors[static_cast<std::size_t>(r)];
    EXPECT_NE(errors[static_cast<std::size_t>(r)].find("99 Float"), std::string::npos);
  }
}

TEST(ShmAllReduce, APeerThatNeverArrivesTimesOutNamingIt) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto options = small_slots();
  options.timeout = std::chrono::milliseconds(1500);
  std::unique_ptr<SharedMemoryAllReduce> idle;
  std::string error;
  std::thread peer([&] { idle = SharedMemoryAllReduce::connect(*store, 1, 2, options); });
  auto group = SharedMemoryAllReduce::connect(*store, 0, 2, options);
  peer.join();
  const auto start = std::chrono::steady_clock::now();
  auto t = at::ones({10});
  try {
    group->allreduce(t, 0)->wait();
  } catch (const std::exception& e) {
    error = e.what();
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(error.find("local rank 1"), std::string::npos) << error;
  EXPECT_NE(error.find("did not reach the barrier within 1.5 s"), std::string::npos) << error;
  EXPECT_GE(waited, 1.5);
  EXPECT_LT(waited, 10.0);
  // The group is broken now: later all-reduces fail at once with the same error.
  EXPECT_THROW(group->allreduce(t, 0)->wait(), std::runtime_error);
}

TEST(ShmAllReduce, APeerThatLeavesWhileAwaitedFailsTheWaiter) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::unique_ptr<SharedMemoryAllReduce> leaving;
  std::thread peer([&] { leaving = SharedMemoryAllReduce::connect(*store, 1, 2, small_slots()); });
  auto group = SharedMemoryAllReduce::connect(*store, 0, 2, small_slots());
  peer.join();
  std::string error;
  auto t = at::ones({10});
  auto work = group->allreduce(t, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  leaving.reset();  // rank 1 shuts down without taking part
  try {
    work->wait();
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("local rank 1"), std::string::npos) << error;
  EXPECT_NE(error.find("left the group"), std::string::npos) << error;
}

TEST(ShmAllReduce, ASegmentThatCannotBeReservedFailsOnEveryRankWithTheReason) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto options = small_slots(std::size_t{1} << 50);  // 1 PiB per slot: no /dev/shm holds it
  std::vector<std::string> why(2);
  std::vector<bool> got(2, true);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      got[static_cast<std::size_t>(r)] =
          SharedMemoryAllReduce::connect(*store, r, 2, options,
                                         &why[static_cast<std::size_t>(r)]) != nullptr;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(got[static_cast<std::size_t>(r)]) << "rank " << r;
    EXPECT_NE(why[static_cast<std::size_t>(r)].find("local rank 0: cannot reserve"),
              std::string::npos)
        << why[static_cast<std::size_t>(r)];
  }
}

TEST(ShmAllReduce, DefaultSlotsStayWithinHalfOfADockerDevShm) {
  EXPECT_EQ(SharedMemoryAllReduce::default_slot_bytes(2), std::size_t{4} << 20);
  EXPECT_EQ(SharedMemoryAllReduce::default_slot_bytes(4), std::size_t{4} << 20);
  EXPECT_EQ(SharedMemoryAllReduce::default_slot_bytes(8), std::size_t{2} << 20);
  for (int world : {2, 3, 5, 8, 16, 64}) {
    const auto slot = SharedMemoryAllReduce::default_slot_bytes(world);
    EXPECT_EQ(slot % 4096, 0u) << world;
    EXPECT_LE(2 * static_cast<std::size_t>(world) * slot, std::size_t{32} << 20) << world;
  }
  EXPECT_EQ(SharedMemoryAllReduce::default_slot_bytes(1024), std::size_t{64} << 10);
}

TEST(ShmAllReduce, TakesOnlyContiguousCpuFloatingTensors) {
  EXPECT_TRUE(SharedMemoryAllReduce::supports(at::ones({3})));
  EXPECT_TRUE(SharedMemoryAllReduce::supports(at::ones({3}, at::kDouble)));
  EXPECT_FALSE(SharedMemoryAllReduce::supports(at::ones({3}, at::kHalf)));
  EXPECT_FALSE(SharedMemoryAllReduce::supports(at::ones({3}, at::kLong)));
  EXPECT_FALSE(SharedMemoryAllReduce::supports(at::ones({4, 4}).t()));
}

}  // namespace
