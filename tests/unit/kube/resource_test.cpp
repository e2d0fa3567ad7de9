#include "operator/kube/resource.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ddp3d::kube {
namespace {

TEST(ResourcePath, CoreGroupUsesApiPrefix) {
  EXPECT_EQ(resource_path(resources::pods(), "ns1", "p-0"), "/api/v1/namespaces/ns1/pods/p-0");
  EXPECT_EQ(resource_path(resources::pods(), "ns1", "p-0", "status"),
            "/api/v1/namespaces/ns1/pods/p-0/status");
  EXPECT_EQ(resource_path(resources::services(), "ns1"), "/api/v1/namespaces/ns1/services");
  EXPECT_EQ(resource_path(resources::events(), ""), "/api/v1/events");
}

TEST(ResourcePath, NamedGroupsUseApisPrefix) {
  EXPECT_EQ(resource_path(resources::training_jobs(), "ml", "job-a", "status"),
            "/apis/ddp3d.io/v1alpha1/namespaces/ml/trainingjobs/job-a/status");
  EXPECT_EQ(resource_path(resources::training_jobs(), ""), "/apis/ddp3d.io/v1alpha1/trainingjobs");
  EXPECT_EQ(resource_path(resources::leases(), "kube-system", "ddp3d-operator"),
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ddp3d-operator");
  EXPECT_EQ(resources::leases().api_version(), "coordination.k8s.io/v1");
  EXPECT_EQ(resources::pods().api_version(), "v1");
}

TEST(ResourcePath, ClusterScopedIgnoresNamespace) {
  EXPECT_EQ(resource_path(resources::namespaces(), "ignored", "ml"), "/api/v1/namespaces/ml");
}

TEST(ResourcePath, EscapesSegmentsAndRejectsSubresourceWithoutName) {
  EXPECT_EQ(resource_path(resources::pods(), "a/b", "x?y"), "/api/v1/namespaces/a%2Fb/pods/x%3Fy");
  EXPECT_THROW(resource_path(resources::pods(), "ns", "", "status"), std::invalid_argument);
}

}  // namespace
}  // namespace ddp3d::kube
