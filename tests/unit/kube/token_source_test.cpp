#include "operator/kube/token_source.h"

#include <gtest/gtest.h>

#include "operator/kube/errors.h"
#include "temp_dir.h"

namespace ddp3d::kube {
namespace {

TEST(TokenSource, StaticTokenIsTrimmed) {
  TokenSource t(" abc\n", {});
  EXPECT_EQ(t.token(), "abc");
}

TEST(TokenSource, RereadsTheFileWhenItChanges) {
  testing::TempDir dir;
  const auto file = dir.write("token", "first-token\n");
  TokenSource t("ignored", file);
  EXPECT_EQ(t.token(), "first-token");
  // The kubelet rotates projected tokens by swapping the file.
  dir.write("token", "second-token-longer\n");
  std::filesystem::last_write_time(
      file, std::filesystem::last_write_time(file) + std::chrono::seconds(1));
  EXPECT_EQ(t.token(), "second-token-longer");
  // A briefly missing file keeps the last token instead of failing requests.
  std::filesystem::remove(file);
  EXPECT_EQ(t.token(), "second-token-longer");
}

TEST(TokenSource, MissingFileBeforeFirstReadIsAConfigError) {
  TokenSource t("", "/nonexistent/token");
  EXPECT_THROW(t.token(), ConfigError);
}

}  // namespace
}  // namespace ddp3d::kube
