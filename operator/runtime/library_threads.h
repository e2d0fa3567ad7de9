// Starts the threads that cpprest and Boost.Asio create lazily and keep until static
// destruction (the shared task pool; Asio's resolver thread, made by the first name lookup),
// so a thread count taken afterwards contains them and only the process's own threads come
// and go (thread_census.h).
#pragma once

namespace ddp3d::op::runtime {

void start_library_threads();

}  // namespace ddp3d::op::runtime
