#include "worker/dist/shm_allreduce.h"

#include <ATen/ATen.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <mutex>
#include <new>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "worker/dist/shm_segment.h"

namespace ddp3d::dist {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMagic = 0x6464703373686d31ULL;  // "ddp3shm1"
constexpr std::size_t kCacheLine = 64;
constexpr std::size_t kPage = 4096;
// Spin iterations before sleeping on a futex: a peer that is a few microseconds behind is
// waited for without a system call; one that is still computing costs no CPU.
constexpr int kSpins = 256;
// Sleep granularity while waiting; liveness and the timeout are checked about once a second.
constexpr long kSleepNs = 20'000'000;

static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "counters in shared memory must be address-free");

struct alignas(kCacheLine) ControlBlock {
  std::uint64_t magic;
  std::uint64_t world;
  std::uint64_t slot_bytes;
};

enum RankState : std::uint32_t { kAlive = 0, kFailed = 1, kLeft = 2 };

// One cache line per rank, written only by that rank.
struct alignas(kCacheLine) RankLine {
  std::atomic<std::uint32_t> arrived;  // barriers this rank has reached
  std::atomic<std::uint32_t> state;    // RankState
  std::int32_t pid;
  std::int64_t numel;  // elements of the all-reduce in progress (checked across ranks)
  std::int32_t dtype;
};

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

std::size_t data_offset(int world) {
  return round_up(sizeof(ControlBlock) + static_cast<std::size_t>(world) * sizeof(RankLine), kPage);
}

std::size_t segment_size(int world, std::size_t slot_bytes) {
  return data_offset(world) + 2 * static_cast<std::size_t>(world) * slot_bytes;
}

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) {
  // std::atomic<uint32_t> is a plain 32-bit word (asserted lock-free above), as futex needs.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}

bool reached(std::uint32_t value, std::uint32_t target) {
  return static_cast<std::int32_t>(value - target) >= 0;  // wrap-around safe
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// False once `pid` has exited (gone, or a zombie its launcher has not reaped yet).
bool process_alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!stat || !std::getline(stat, line)) return false;
  const auto paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return true;
  const char state = line[paren + 2];
  return state != 'Z' && state != 'X';
}

std::string bytes_of(const std::vector<std::uint8_t>& v) {
  return {v.begin(), v.end()};
}

std::vector<std::uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

std::string random_suffix() {
  std::random_device rd;
  std::ostringstream s;
  s << std::hex << rd() << rd();
  return s.str();
}

// dst0[i] (and dst1[i] if given) = sum over ranks of inputs[j][i], scaled for i < scaled.
// Summed blockwise into an L1-resident buffer, so the sources may alias the destinations.
template <class T>
void sum_part(const std::vector<const T*>& inputs, T* dst0, T* dst1, std::int64_t n,
              std::int64_t scaled, T scale) {
  constexpr std::int64_t kBlock = 2048;
  alignas(kCacheLine) T block[kBlock];
  const auto world = inputs.size();
  for (std::int64_t b = 0; b < n; b += kBlock) {
    const std::int64_t len = std::min(kBlock, n - b);
    T* __restrict o = block;
    const T* __restrict s0 = inputs[0] + b;
    const T* __restrict s1 = inputs[1] + b;
    for (std::int64_t i = 0; i < len; ++i) o[i] = s0[i] + s1[i];
    for (std::size_t j = 2; j < world; ++j) {
      const T* __restrict sj = inputs[j] + b;
      for (std::int64_t i = 0; i < len; ++i) o[i] += sj[i];
    }
    const std::int64_t to_scale = std::clamp<std::int64_t>(scaled - b, 0, len);
    for (std::int64_t i = 0; i < to_scale; ++i) o[i] *= scale;
    std::memcpy(dst0 + b, o, static_cast<std::size_t>(len) * sizeof(T));
    if (dst1 != nullptr) std::memcpy(dst1 + b, o, static_cast<std::size_t>(len) * sizeof(T));
  }
}

// Where a tensor from allocate_shared lives: every rank's copy is at the same offset of its
// own region of one segment.
struct SharedPlace {
  const char* base = nullptr;  // this process's mapping of the segment
  std::size_t region_bytes = 0;
  std::size_t offset = 0;
};

// The live tensors from allocate_shared, by data pointer. Their deleters remove their own
// entries, so a later private tensor at a reused address is never taken for one of them.
struct SharedRegistry {
  std::mutex mu;
  std::unordered_map<const void*, SharedPlace> places;
};

// Collective: rank 0 creates a segment of `bytes` (`init` lays it out before anyone else
// can see it), the others map it and `check` it (an error text, or empty). Every rank
// publishes its verdict and reads all of them, so either every rank returns a mapped
// segment, or every rank returns an empty one with `error` naming the first rank that failed.
SharedMemorySegment map_group_segment(c10d::Store& store, const std::string& prefix, int rank,
                                      int world, std::size_t bytes,
                                      const std::function<void(void*)>& init,
                                      const std::function<std::string(const void*)>& check,
                                      std::string& error) {
  SharedMemorySegment segment;
  std::string mine;
  try {
    if (rank == 0) {
      const std::string name = "/ddp3d-" + std::to_string(getpid()) + "-" + random_suffix();
      try {
        segment = SharedMemorySegment::create(name, bytes);
        if (init) init(segment.data());
      } catch (const std::exception& e) {
        mine = e.what();
      }
      store.set(prefix + "name", bytes_of(mine.empty() ? name : std::string()));
    } else {
      const std::string name = bytes_of(store.get(prefix + "name"));
      if (name.empty()) {
        mine = "rank 0 could not create the segment";
      } else {
        segment = SharedMemorySegment::open(name, bytes);
        if (check) mine = check(segment.data());
      }
    }
  } catch (const std::exception& e) {
    if (mine.empty()) mine = e.what();
  }
  store.set(prefix + "status/" + std::to_string(rank), bytes_of(mine.empty() ? "ok" : mine));
  error.clear();
  for (int j = 0; j < world; ++j) {
    const auto verdict = bytes_of(store.get(prefix + "status/" + std::to_string(j)));
    if (verdict != "ok" && error.empty())
      error = "local rank " + std::to_string(j) + ": " + verdict;
  }
  segment.unlink();  // everyone has mapped it (or given up): the name is no longer needed
  if (!error.empty()) return {};
  return segment;
}

class Op final : public ShmAllReduceWork {
 public:
  Op(at::Tensor t, std::int64_t average, SharedPlace where)
      : flat(std::move(t)), average_numel(average), place(where) {}
  void wait() override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }
  void finish(std::exception_ptr error) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::move(error);
      finished_ = Clock::now();
      done_ = true;
    }
    cv_.notify_all();
  }
  Clock::time_point finished_at() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }
  at::Tensor flat;
  std::int64_t average_numel;
  SharedPlace place;  // base null: a private tensor, which goes through the slots

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Clock::time_point finished_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace

struct SharedMemoryAllReduce::Impl {
  c10d::Store* store = nullptr;  // outlives this object (the process group owns it)
  std::string store_prefix;
  SharedMemorySegment segment;
  int rank = 0;
  int world = 0;
  std::size_t slot_bytes = 0;
  std::chrono::milliseconds timeout{};
  bool check_pids = true;
  RankLine* lines = nullptr;
  char* data = nullptr;
  std::uint32_t arrived = 0;  // this rank's barrier count (mirrors lines[rank].arrived)
  int buffer = 0;             // which of the two slots per rank the next piece uses

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Op>> queue;
  bool stopping = false;
  std::exception_ptr broken;  // after a failure every later all-reduce fails with it
  std::thread thread;
  // Tensors from allocate_shared, by data pointer.
  std::shared_ptr<SharedRegistry> shared_tensors = std::make_shared<SharedRegistry>();
  int allocations = 0;
  std::atomic<std::int64_t> in_place_done{0};
  std::function<void(at::Tensor&)> sum_across_nodes;  // empty on one node
  int nodes = 1;

  // Averages divide by every rank of every node.
  template <class T>
  T scale() const {
    return T(1) / static_cast<T>(world * nodes);
  }

  // Rank r's part [begin, begin + len) of `op`, summed over this node into `dst`: on one
  // node that is the result (scaled where averaged); across nodes it is all-reduced over the
  // nodes first, and scaled after.
  template <class T>
  void reduce_part(const std::vector<const T*>& inputs, Op& op, std::int64_t begin,
                   std::int64_t len, T* dst, T* also) {
    const std::int64_t scaled = op.average_numel - begin;
    if (!sum_across_nodes) {
      sum_part(inputs, dst, also, len, scaled, scale<T>());
      return;
    }
    sum_part(inputs, dst, static_cast<T*>(nullptr), len, 0, T(1));
    at::Tensor mine = op.flat.narrow(0, begin, len);
    sum_across_nodes(mine);
    const std::int64_t k = std::clamp<std::int64_t>(scaled, 0, len);
    if (k > 0) mine.narrow(0, 0, k).mul_(scale<T>());
    if (also != nullptr) std::memcpy(also, dst, static_cast<std::size_t>(len) * sizeof(T));
  }

  template <class T>
  T* slot(int r, int buf) const {
    return reinterpret_cast<T*>(data + (static_cast<std::size_t>(r) * 2 + buf) * slot_bytes);
  }

  std::string who(int r) const {
    return "local rank " + std::to_string(r) + " (pid " + std::to_string(lines[r].pid) + ")";
  }

  void wake(std::atomic<std::uint32_t>& word) { futex(&word, FUTEX_WAKE, INT_MAX, nullptr); }

  void barrier() {
    const std::uint32_t target = ++arrived;
    lines[rank].arrived.store(target, std::memory_order_release);
    wake(lines[rank].arrived);
    for (int j = 0; j < world; ++j) {
      if (j != rank) wait_for(j, target);
    }
  }

  void wait_for(int j, std::uint32_t target) {
    RankLine& peer = lines[j];
    for (int i = 0; i < kSpins; ++i) {
      if (reached(peer.arrived.load(std::memory_order_acquire), target)) return;
      cpu_relax();
    }
    const auto start = Clock::now();
    auto checked = start;
    for (;;) {
      const std::uint32_t seen = peer.arrived.load(std::memory_order_acquire);
      if (reached(seen, target)) return;
      if (const auto state = peer.state.load(std::memory_order_acquire); state != kAlive) {
        if (reached(peer.arrived.load(std::memory_order_acquire), target)) return;
        throw std::runtime_error("shared-memory all-reduce: " + who(j) +
                                 (state == kFailed ? " failed" : " left the group") +
                                 " while rank " + std::to_string(rank) + " waited for it");
      }
      const timespec sleep{0, kSleepNs};
      futex(&peer.arrived, FUTEX_WAIT, seen, &sleep);
      const auto now = Clock::now();
      if (now - checked < std::chrono::seconds(1)) continue;
      checked = now;
      if (check_pids && !process_alive(peer.pid)) {
        throw std::runtime_error("shared-memory all-reduce: " + who(j) +
                                 " exited while local rank " + std::to_string(rank) +
                                 " waited for it");
      }
      if (now - start > timeout) {
        std::ostringstream s;
        s << "shared-memory all-reduce: " << who(j) << " did not reach the barrier within "
          << std::chrono::duration<double>(timeout).count() << " s (local rank " << rank
          << " waited)";
        throw std::runtime_error(s.str());
      }
    }
  }

  // The part of an m-element piece that rank j reduces: contiguous, cache-line aligned.
  std::pair<std::int64_t, std::int64_t> part(std::int64_t m, int j, std::int64_t align) const {
    std::int64_t per = (m + world - 1) / world;
    per = (per + align - 1) / align * align;
    const std::int64_t begin = std::min(m, per * j);
    return {begin, std::min(m, begin + per)};
  }

  void check_same_size(const at::Tensor& flat) {
    for (int j = 0; j < world; ++j) {
      if (lines[j].numel == flat.numel() &&
          lines[j].dtype == static_cast<std::int32_t>(flat.scalar_type())) {
        continue;
      }
      std::ostringstream s;
      s << "shared-memory all-reduce: local rank " << rank << " reduces " << flat.numel() << " "
        << c10::toString(flat.scalar_type()) << " elements but " << who(j) << " reduces "
        << lines[j].numel << " " << c10::toString(static_cast<c10::ScalarType>(lines[j].dtype))
        << "; every rank must issue the same all-reduces";
      throw std::runtime_error(s.str());
    }
  }

  // Announces this op's size to the peers; check_same_size compares after the first barrier.
  void announce_size(const at::Tensor& flat) {
    lines[rank].numel = flat.numel();
    lines[rank].dtype = static_cast<std::int32_t>(flat.scalar_type());
  }

  // All-gather: copies every peer's reduced part j of an m-element piece from `source(j)`
  // (a pointer to the piece's start in rank j's memory) into `dst`.
  template <class T, class Source>
  void copy_peer_parts(T* dst, std::int64_t m, std::int64_t align, Source source) const {
    for (int j = 0; j < world; ++j) {
      if (j == rank) continue;
      const auto [jb, je] = part(m, j, align);
      if (je > jb) {
        std::memcpy(dst + jb, source(j) + jb, static_cast<std::size_t>(je - jb) * sizeof(T));
      }
    }
  }

  template <class T>
  void reduce(Op& op) {
    T* values = op.flat.data_ptr<T>();
    const std::int64_t n = op.flat.numel();
    const auto align = static_cast<std::int64_t>(kCacheLine / sizeof(T));
    const auto granule = align * world;
    const auto piece = static_cast<std::int64_t>(slot_bytes / sizeof(T)) / granule * granule;
    std::vector<const T*> parts(static_cast<std::size_t>(world));
    announce_size(op.flat);
    for (std::int64_t offset = 0; offset < n; offset += piece) {
      const std::int64_t m = std::min(piece, n - offset);
      std::memcpy(slot<T>(rank, buffer), values + offset, static_cast<std::size_t>(m) * sizeof(T));
      barrier();
      if (offset == 0) check_same_size(op.flat);
      const auto [begin, end] = part(m, rank, align);
      if (end > begin) {
        for (int j = 0; j < world; ++j)
          parts[static_cast<std::size_t>(j)] = slot<T>(j, buffer) + begin;
        reduce_part(parts, op, offset + begin, end - begin, values + offset + begin,
                    slot<T>(rank, buffer) + begin);
      }
      barrier();
      copy_peer_parts(values + offset, m, align,
                      [&](int j) -> const T* { return slot<T>(j, buffer); });
      buffer ^= 1;
    }
  }

  // A tensor in shared memory: no copy into the slots, every rank reads its peers' copies
  // where they are. The third barrier keeps a rank from overwriting its tensor (the next
  // backward) while a peer still copies the part it reduced.
  template <class T>
  void reduce_in_place(Op& op) {
    T* values = op.flat.data_ptr<T>();
    const std::int64_t n = op.flat.numel();
    const auto align = static_cast<std::int64_t>(kCacheLine / sizeof(T));
    std::vector<const T*> copies(static_cast<std::size_t>(world));
    for (int j = 0; j < world; ++j) {
      copies[static_cast<std::size_t>(j)] = reinterpret_cast<const T*>(
          op.place.base + op.place.region_bytes * static_cast<std::size_t>(j) + op.place.offset);
    }
    announce_size(op.flat);
    barrier();
    check_same_size(op.flat);
    const auto [begin, end] = part(n, rank, align);
    if (end > begin) {
      std::vector<const T*> parts;
      parts.reserve(copies.size());
      for (const T* c : copies) parts.push_back(c + begin);
      reduce_part(parts, op, begin, end - begin, values + begin, static_cast<T*>(nullptr));
    }
    barrier();
    copy_peer_parts(values, n, align, [&](int j) { return copies[static_cast<std::size_t>(j)]; });
    barrier();
    in_place_done.fetch_add(1, std::memory_order_relaxed);
  }

  void run(Op& op) {
    const bool in_place = op.place.base != nullptr;
    if (op.flat.scalar_type() == at::kFloat) {
      in_place ? reduce_in_place<float>(op) : reduce<float>(op);
    } else {
      in_place ? reduce_in_place<double>(op) : reduce<double>(op);
    }
  }

  void loop() {
    for (;;) {
      std::shared_ptr<Op> op;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        op = std::move(queue.front());
        queue.pop_front();
      }
      std::exception_ptr error = broken;
      if (!error) {
        try {
          run(*op);
        } catch (...) {
          error = std::current_exception();
          broken = error;
          lines[rank].state.store(kFailed, std::memory_order_release);
          wake(lines[rank].arrived);
        }
      }
      op->finish(error);
    }
  }
};

SharedMemoryAllReduce::SharedMemoryAllReduce(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->loop(); });
}

SharedMemoryAllReduce::~SharedMemoryAllReduce() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
  RankLine& mine = impl_->lines[impl_->rank];
  std::uint32_t alive = kAlive;
  mine.state.compare_exchange_strong(alive, kLeft, std::memory_order_acq_rel);
  impl_->wake(mine.arrived);
}

std::size_t SharedMemoryAllReduce::default_slot_bytes(int world) {
  constexpr std::size_t kMax = std::size_t{4} << 20;
  constexpr std::size_t kBudget = std::size_t{32} << 20;
  constexpr std::size_t kMin = std::size_t{64} << 10;
  const std::size_t fit =
      kBudget / (2 * static_cast<std::size_t>(std::max(world, 1))) / kPage * kPage;
  return std::clamp(fit, kMin, kMax);
}

bool SharedMemoryAllReduce::supports(const at::Tensor& tensor) {
  return tensor.defined() && tensor.device().is_cpu() && tensor.is_contiguous() &&
         (tensor.scalar_type() == at::kFloat || tensor.scalar_type() == at::kDouble);
}

std::shared_ptr<ShmAllReduceWork> SharedMemoryAllReduce::allreduce(const at::Tensor& flat,
                                                                   std::int64_t average_numel) {
  if (!supports(flat)) {
    throw std::invalid_argument(
        "shared-memory all-reduce takes a contiguous CPU float or double tensor");
  }
  SharedPlace place;
  {
    SharedRegistry& shared = *impl_->shared_tensors;
    std::lock_guard<std::mutex> lock(shared.mu);
    if (auto it = shared.places.find(flat.data_ptr()); it != shared.places.end()) {
      place = it->second;
    }
  }
  std::shared_ptr<Op> op;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    op = std::make_shared<Op>(flat, average_numel, place);
    impl_->queue.push_back(op);
  }
  impl_->cv.notify_all();
  return op;
}

std::vector<at::Tensor> SharedMemoryAllReduce::allocate_shared(
    const std::vector<std::pair<std::int64_t, at::ScalarType>>& specs, std::string* why) {
  Impl& im = *impl_;
  std::vector<std::size_t> offsets;
  std::size_t total = 0;
  for (const auto& [numel, dtype] : specs) {
    if (dtype != at::kFloat && dtype != at::kDouble) {
      throw std::invalid_argument("allocate_shared takes float or double tensors");
    }
    offsets.push_back(total);
    total = round_up(total + static_cast<std::size_t>(numel) * c10::elementSize(dtype), kPage);
  }
  const std::size_t region = std::max(total, kPage);
  std::string error;
  const std::string prefix = im.store_prefix + "shared" + std::to_string(im.allocations++) + "/";
  auto segment = std::make_shared<SharedMemorySegment>(
      map_group_segment(*im.store, prefix, im.rank, im.world,
                        region * static_cast<std::size_t>(im.world), {}, {}, error));
  if (!error.empty()) {
    if (why != nullptr) *why = error;
    return {};
  }
  char* base = static_cast<char*>(segment->data());
  char* mine = base + region * static_cast<std::size_t>(im.rank);
  std::vector<at::Tensor> tensors;
  auto registry = im.shared_tensors;
  std::lock_guard<std::mutex> lock(registry->mu);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    void* data = mine + offsets[i];
    // The deleter holds the mapping (it lives as long as any of these tensors) and forgets
    // the tensor's place when it goes.
    tensors.push_back(at::from_blob(
        data, {specs[i].first},
        [segment, registry](void* p) {
          std::lock_guard<std::mutex> forget(registry->mu);
          registry->places.erase(p);
        },
        at::TensorOptions().dtype(specs[i].second)));
    registry->places[data] = SharedPlace{base, region, offsets[i]};
  }
  return tensors;
}

void SharedMemoryAllReduce::set_inter_node_sum(std::function<void(at::Tensor&)> sum_across_nodes,
                                               int nodes) {
  if (nodes < 1) throw std::invalid_argument("set_inter_node_sum: nodes must be >= 1");
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->sum_across_nodes = nodes > 1 ? std::move(sum_across_nodes) : nullptr;
  impl_->nodes = nodes;
}

int SharedMemoryAllReduce::nodes() const {
  return impl_->nodes;
}

std::int64_t SharedMemoryAllReduce::in_place_allreduces() const {
  return impl_->in_place_done.load(std::memory_order_relaxed);
}

int SharedMemoryAllReduce::rank() const {
  return impl_->rank;
}

int SharedMemoryAllReduce::world() const {
  return impl_->world;
}

std::size_t SharedMemoryAllReduce::segment_bytes() const {
  return impl_->segment.size();
}

std::unique_ptr<SharedMemoryAllReduce> SharedMemoryAllReduce::connect(c10d::Store& store, int rank,
                                                                      int world,
                                                                      const Options& options,
                                                                      std::string* why) {
  if (world < 2 || rank < 0 || rank >= world) {
    throw std::invalid_argument("shared-memory all-reduce needs 0 <= rank < world, world >= 2");
  }
  if (options.slot_bytes < kPage || options.slot_bytes % kPage != 0) {
    throw std::invalid_argument("shared-memory all-reduce: slot_bytes must be a multiple of 4096");
  }
  auto impl = std::make_unique<Impl>();
  impl->rank = rank;
  impl->world = world;
  impl->slot_bytes = options.slot_bytes;
  impl->timeout = options.timeout;
  impl->store = &store;
  impl->store_prefix = options.store_prefix;
  std::string error;
  impl->segment = map_group_segment(
      store, options.store_prefix, rank, world, segment_size(world, options.slot_bytes),
      [&](void* data) {
        new (data) ControlBlock{kMagic, static_cast<std::uint64_t>(world), options.slot_bytes};
        auto* lines = reinterpret_cast<RankLine*>(static_cast<char*>(data) + sizeof(ControlBlock));
        for (int j = 0; j < world; ++j) new (&lines[j]) RankLine{};
      },
      [&](const void* data) -> std::string {
        const auto* control = static_cast<const ControlBlock*>(data);
        if (control->magic == kMagic && control->world == static_cast<std::uint64_t>(world) &&
            control->slot_bytes == options.slot_bytes) {
          return "";
        }
        return "the segment does not hold this group's layout";
      },
      error);
  if (!error.empty()) {
    if (why != nullptr) *why = error;
    return nullptr;
  }
  impl->lines =
      reinterpret_cast<RankLine*>(static_cast<char*>(impl->segment.data()) + sizeof(ControlBlock));
  impl->data = static_cast<char*>(impl->segment.data()) + data_offset(world);
  // Each rank's pid is written before the group agrees (a store round trip), so every rank
  // sees every pid afterwards.
  impl->lines[rank].pid = static_cast<std::int32_t>(getpid());
  store.set(options.store_prefix + "pids/" + std::to_string(rank), bytes_of("ok"));
  for (int j = 0; j < world; ++j) store.get(options.store_prefix + "pids/" + std::to_string(j));
  // Liveness checks read /proc/<pid>; without a shared PID namespace they cannot work.
  for (int j = 0; j < world; ++j) {
    impl->check_pids = impl->check_pids && process_alive(impl->lines[j].pid);
  }
  return std::unique_ptr<SharedMemoryAllReduce>(new SharedMemoryAllReduce(std::move(impl)));
}

}  // namespace ddp3d::dist
