// libFuzzer: a kubeconfig's text (clusters, users, contexts, base64 PEM data, exec plugins;
// nothing is run or connected to by parsing).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "operator/kube/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)ddp3d::kube::parse_kubeconfig(std::string(reinterpret_cast<const char*>(data), size),
                                        "/nonexistent/ddp3d-fuzz/kubeconfig");
  } catch (const std::exception&) {
  }
  return 0;
}
