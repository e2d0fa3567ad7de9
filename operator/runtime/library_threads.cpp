#include "operator/runtime/library_threads.h"

#include <pplx/pplxtasks.h>
#include <pplx/threadpool.h>

#include <boost/asio/ip/tcp.hpp>
#include <future>

namespace ddp3d::op::runtime {

void start_library_threads() {
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
