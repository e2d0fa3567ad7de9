#include "operator/controller/event_object.h"

#include <cstdio>

#include "operator/api/timestamps.h"

namespace ddp3d::op::controller {

using web::json::value;

value event_object(const api::ObjectMeta& job, const std::string& type, const std::string& reason,
                   const std::string& message, int64_t now_ns, const std::string& instance) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%llx", static_cast<unsigned long long>(now_ns));
  // Event names are DNS subdomains (253); the job name may already use most of that.
  std::string name = job.name.substr(0, 253 - 17) + "." + hex;
  const std::string ts = api::format_rfc3339(now_ns / 1000000000);
  value ev = value::object();
  ev["apiVersion"] = value::string("v1");
  ev["kind"] = value::string("Event");
  ev["metadata"] = value::object();
  ev["metadata"]["name"] = value::string(name);
  ev["metadata"]["namespace"] = value::string(job.namespace_);
  value involved = value::object();
  involved["apiVersion"] = value::string(api::kApiVersion);
  involved["kind"] = value::string(api::kKind);
  involved["name"] = value::string(job.name);
  involved["namespace"] = value::string(job.namespace_);
  involved["uid"] = value::string(job.uid);
  ev["involvedObject"] = involved;
  ev["type"] = value::string(type);
  ev["reason"] = value::string(reason);
  ev["message"] = value::string(event_message(message));
  ev["source"] = value::object();
  ev["source"]["component"] = value::string(kComponent);
  ev["reportingComponent"] = value::string(kComponent);
  ev["reportingInstance"] = value::string(instance.substr(0, 128));
  ev["firstTimestamp"] = value::string(ts);
  ev["lastTimestamp"] = value::string(ts);
  ev["count"] = value::number(1);
  return ev;
}

std::string event_message(const std::string& message) {
  return message.size() > 1000 ? message.substr(0, 1000) : message;
}

value event_repeat_patch(int32_t count, int64_t now_ns) {
  value patch = value::object();
  patch["count"] = value::number(count);
  patch["lastTimestamp"] = value::string(api::format_rfc3339(now_ns / 1000000000));
  return patch;
}

}  // namespace ddp3d::op::controller
