#include "operator/runtime/library_threads.h"

#include <pplx/pplxtasks.h>
#include <pplx/threadpool.h>

#include <boost/asio/ip/tcp.hpp>
#include <cstddef>
#include <future>

// ThreadSanitizer builds (GCC defines __SANITIZE_THREAD__, clang has the feature test).
#if defined(__SANITIZE_THREAD__)
#define DDP3D_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DDP3D_THREAD_SANITIZER 1
#endif
#endif

namespace ddp3d::op::runtime {
namespace {
constexpr std::size_t kLibraryPoolThreads = 2;
}  // namespace

void start_library_threads() {
#ifndef DDP3D_THREAD_SANITIZER
  // cpprest's default pool has 40 threads, and each request hops between them (I/O, each
  // continuation, the waiting caller): most of the operator's CPU went to waking threads.
  // Its handlers never block, so two threads carry every request (docs/operator.md,
  // "Requests at scale"). Not under TSan: its deadlock detector tracks at most 64 locks held
  // by one thread, and with 2 threads cpprest's chunked-body continuations (watch streams)
  // run nested deeper than that on one thread; TSan then aborts on its own CHECK.
  crossplat::threadpool::initialize_with_threads(kLibraryPoolThreads);
#endif
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
