#include "operator/kube/resource.h"

#include <stdexcept>

namespace ddp3d::kube {
namespace resources {

const Resource& pods() {
  static const Resource r{"", "v1", "pods", "Pod", true};
  return r;
}
const Resource& services() {
  static const Resource r{"", "v1", "services", "Service", true};
  return r;
}
const Resource& events() {
  static const Resource r{"", "v1", "events", "Event", true};
  return r;
}
const Resource& secrets() {
  static const Resource r{"", "v1", "secrets", "Secret", true};
  return r;
}
const Resource& network_policies() {
  static const Resource r{"networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", true};
  return r;
}
const Resource& config_maps() {
  static const Resource r{"", "v1", "configmaps", "ConfigMap", true};
  return r;
}
const Resource& namespaces() {
  static const Resource r{"", "v1", "namespaces", "Namespace", false};
  return r;
}
const Resource& nodes() {
  static const Resource r{"", "v1", "nodes", "Node", false};
  return r;
}
const Resource& leases() {
  static const Resource r{"coordination.k8s.io", "v1", "leases", "Lease", true};
  return r;
}
const Resource& training_jobs() {
  static const Resource r{"ddp3d.io", "v1alpha1", "trainingjobs", "TrainingJob", true};
  return r;
}

const Resource& workloads() {
  static const Resource r{"kueue.x-k8s.io", "v1beta2", "workloads", "Workload", true};
  return r;
}

const Resource& resource_flavors() {
  static const Resource r{"kueue.x-k8s.io", "v1beta2", "resourceflavors", "ResourceFlavor", false};
  return r;
}

const Resource& priority_classes() {
  static const Resource r{"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false};
  return r;
}

}  // namespace resources

namespace {

// Percent-encodes everything outside RFC 3986's unreserved set, so a name can never inject
// path segments or a query.
std::string escape_segment(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~' || c == ':') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string resource_path(const Resource& r, const std::string& ns, const std::string& name,
                          const std::string& subresource) {
  if (!subresource.empty() && name.empty())
    throw std::invalid_argument("resource_path: subresource '" + subresource + "' of " + r.plural +
                                " needs an object name");
  std::string path = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (r.namespaced && !ns.empty()) path += "/namespaces/" + escape_segment(ns);
  path += "/" + r.plural;
  if (!name.empty()) path += "/" + escape_segment(name);
  if (!subresource.empty()) path += "/" + escape_segment(subresource);
  return path;
}

}  // namespace ddp3d::kube
