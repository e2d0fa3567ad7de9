#include "worker/dist/peer_loss_error.h"

#include <gtest/gtest.h>

namespace ddp3d::dist {
namespace {

TEST(PeerLossError, TransportErrorsOfAPeerThatIsGone) {
  // As Gloo reported them when a peer's process was killed or its node powered off.
  EXPECT_TRUE(is_peer_loss_error(
      "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] Connection "
      "closed by peer [10.88.2.5]:17635"));
  EXPECT_TRUE(is_peer_loss_error("Read error [10.88.1.3]:4242: Connection reset by peer"));
  EXPECT_TRUE(is_peer_loss_error("Write error [10.88.1.3]:4242: Broken pipe"));
  EXPECT_TRUE(is_peer_loss_error("connect [10.88.2.7]:29500: No route to host"));
}

TEST(PeerLossError, TheProgramsOwnErrorsAreNot) {
  EXPECT_FALSE(is_peer_loss_error("loss is NaN at iteration 12 on rank 1"));
  EXPECT_FALSE(is_peer_loss_error("CUDA out of memory"));
  EXPECT_FALSE(
      is_peer_loss_error("rendezvous authentication failed: rank 1 presented a token "
                         "other than rank 0's"));
  EXPECT_FALSE(is_peer_loss_error(""));
}

}  // namespace
}  // namespace ddp3d::dist
