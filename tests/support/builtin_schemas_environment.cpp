// Linked into the test binaries that load configs: the built-in components' schemas are
// registered before any test runs, as the binary and the config tool do at start.
#include <gtest/gtest.h>

#include "worker/components/builtin_components.h"

namespace {

class BuiltinSchemas : public ::testing::Environment {
 public:
  void SetUp() override { ddp3d::components::register_builtin_schemas(); }
};

[[maybe_unused]] ::testing::Environment* const kBuiltinSchemas =
    ::testing::AddGlobalTestEnvironment(new BuiltinSchemas);

}  // namespace
