#include "operator/kube/base64.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ddp3d::kube {
namespace {

TEST(Base64, DecodesRfc4648Vectors) {
  EXPECT_EQ(base64_decode(""), "");
  EXPECT_EQ(base64_decode("Zg=="), "f");
  EXPECT_EQ(base64_decode("Zm8="), "fo");
  EXPECT_EQ(base64_decode("Zm9v"), "foo");
  EXPECT_EQ(base64_decode("Zm9vYg=="), "foob");
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(base64_decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(base64_decode("Zm9v\nYmFy\n"), "foobar");  // wrapped lines
  EXPECT_EQ(base64_decode("Zm8"), "fo");               // padding optional
  EXPECT_EQ(base64_decode("//79"), std::string("\xff\xfe\xfd"));
}

TEST(Base64, RejectsBadInputWithPosition) {
  try {
    base64_decode("Zm9v*mFy");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'*' at offset 4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(base64_decode("Z"), std::invalid_argument);
  EXPECT_THROW(base64_decode("Zg==Zg"), std::invalid_argument);
  EXPECT_THROW(base64_decode("Zg="), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::kube
