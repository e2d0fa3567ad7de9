// Which REST collection an object lives in, and the URL paths built from it.
#pragma once

#include <string>

namespace ddp3d::kube {

struct Resource {
  std::string group;    // "" for the core API
  std::string version;  // "v1", "v1alpha1"
  std::string plural;   // "pods", "trainingjobs"
  std::string kind;     // "Pod", "TrainingJob"
  bool namespaced = true;

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
};

namespace resources {
const Resource& pods();
const Resource& services();
const Resource& events();
const Resource& config_maps();
const Resource& secrets();
const Resource& network_policies();  // networking.k8s.io/v1
const Resource& namespaces();
const Resource& nodes();
const Resource& leases();            // coordination.k8s.io/v1
const Resource& training_jobs();     // ddp3d.io/v1alpha1
const Resource& workloads();         // kueue.x-k8s.io/v1beta2
const Resource& resource_flavors();  // kueue.x-k8s.io/v1beta2, cluster-scoped
const Resource& priority_classes();  // scheduling.k8s.io/v1, cluster-scoped
}  // namespace resources

// "/api/v1/namespaces/ns/pods/name/status", "/apis/ddp3d.io/v1alpha1/trainingjobs" (all
// namespaces when `ns` is empty), ... `name` and `subresource` may be empty. Segments are
// percent-encoded. Throws std::invalid_argument for a subresource without a name.
std::string resource_path(const Resource& resource, const std::string& ns,
                          const std::string& name = {}, const std::string& subresource = {});

}  // namespace ddp3d::kube
