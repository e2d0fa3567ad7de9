#include "operator/controller/actions.h"

namespace ddp3d::op::controller {
namespace {

std::string name_in(const web::json::value& object) {
  if (!object.has_field("metadata")) return "";
  const auto& meta = object.at("metadata");
  return meta.has_string_field("name") ? meta.at("name").as_string() : "";
}

struct KindName {
  const char* operator()(const CreateService&) const { return "CreateService"; }
  const char* operator()(const CreateNetworkPolicy&) const { return "CreateNetworkPolicy"; }
  const char* operator()(const CreateRendezvousSecret&) const { return "CreateRendezvousSecret"; }
  const char* operator()(const CreatePodGroup&) const { return "CreatePodGroup"; }
  const char* operator()(const CreatePod&) const { return "CreatePod"; }
  const char* operator()(const CreateWorkload&) const { return "CreateWorkload"; }
  const char* operator()(const UpdateWorkloadStatus&) const { return "UpdateWorkloadStatus"; }
  const char* operator()(const RemoveWorkloadFinalizer&) const { return "RemoveWorkloadFinalizer"; }
  const char* operator()(const DeletePod&) const { return "DeletePod"; }
  const char* operator()(const DeleteJob&) const { return "DeleteJob"; }
  const char* operator()(const RecordEvent&) const { return "Event"; }
};

struct TargetName {
  std::string operator()(const RemoveWorkloadFinalizer& a) const { return a.name; }
  std::string operator()(const DeletePod& a) const { return a.name; }
  std::string operator()(const DeleteJob& a) const { return a.name; }
  std::string operator()(const RecordEvent& a) const { return a.reason; }
  template <class Create>
  std::string operator()(const Create& a) const {
    return name_in(a.object);
  }
};

}  // namespace

const char* kind_of(const Action& action) {
  return std::visit(KindName{}, action);
}

std::string target_of(const Action& action) {
  return std::visit(TargetName{}, action);
}

}  // namespace ddp3d::op::controller
