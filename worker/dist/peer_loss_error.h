// Whether an error from a collective means a peer went away: its connection was closed or
// reset, or its host stopped routing. Such a rank stops with exit_code::kPeerLost like one
// whose heartbeat found the loss, so the operator treats it as collateral of the peer's fate
// (a disruption when the peer was lost with its node), not as a failure of its own.
#pragma once

#include <string_view>

namespace ddp3d::dist {

// True for the transport errors Gloo (and the TCP store) report when the other end is gone.
bool is_peer_loss_error(std::string_view message);

}  // namespace ddp3d::dist
