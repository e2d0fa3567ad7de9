#include "operator/runtime/library_threads.h"

#include <pplx/pplxtasks.h>
#include <pplx/threadpool.h>

#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <future>

namespace ddp3d::op::runtime {
namespace {
constexpr std::size_t kLibraryPoolThreads = 2;
}  // namespace

void start_library_threads() {
  // cpprest's default pool has 40 threads, and each request hops between them (I/O, each
  // continuation, the waiting caller): most of the operator's CPU went to waking threads.
  // Its handlers never block, so two threads carry every request; benchmarks/operator/run
  // measured 200 jobs at 1.4 CPU-s against 1.9 with the default pool (docs/operator.md).
  crossplat::threadpool::initialize_with_threads(kLibraryPoolThreads);
  pplx::create_task([] {}).wait();  // the shared pool (pplx tasks and cpprest's I/O)
  // cpprest resolves every host on the shared pool's io_service; a numeric lookup starts
  // that service's resolver thread without touching the network.
  boost::asio::ip::tcp::resolver resolver(crossplat::threadpool::shared_instance().service());
  std::promise<void> resolved;
  resolver.async_resolve(
      "127.0.0.1", "1",
      [&resolved](const boost::system::error_code&,
                  const boost::asio::ip::tcp::resolver::results_type&) { resolved.set_value(); });
  resolved.get_future().wait();
}

}  // namespace ddp3d::op::runtime
