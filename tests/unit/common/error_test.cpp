#include "common/error.h"

#include <gtest/gtest.h>

namespace ddp3d {
namespace {

TEST(Error, MessageLeadsWithContext) {
  const Error e("configs/a.yaml", "key 'lr' must be > 0");
  EXPECT_STREQ(e.what(), "configs/a.yaml: key 'lr' must be > 0");
  EXPECT_EQ(e.context(), "configs/a.yaml");
  // Catchable as the standard type callers already handle.
  EXPECT_THROW(throw Error("x", "y"), std::runtime_error);
}

TEST(Error, EmptyContextIsJustTheMessage) {
  EXPECT_STREQ(Error("", "plain").what(), "plain");
}

}  // namespace
}  // namespace ddp3d
