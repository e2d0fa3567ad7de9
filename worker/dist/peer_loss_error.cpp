#include "worker/dist/peer_loss_error.h"

#include <array>

namespace ddp3d::dist {

bool is_peer_loss_error(std::string_view message) {
  // Gloo's tcp transport ("Connection closed by peer [10.88.2.5]:17635", "Read error
  // [...]: Connection reset by peer", "Write error ...: Broken pipe") and the kernel's
  // answers for a host that is gone.
  static constexpr std::array<std::string_view, 5> kSigns = {
      "Connection closed by peer", "Connection reset by peer", "Broken pipe", "No route to host",
      "Host is unreachable"};
  for (const auto sign : kSigns) {
    if (message.find(sign) != std::string_view::npos) return true;
  }
  return false;
}

}  // namespace ddp3d::dist
