#include "operator/controller/pod_security_defaults.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"
#include "operator/controller/desired_objects.h"

namespace ddp3d::op::controller {
namespace {

using testing::job_json;
using web::json::value;

value pod_for(const std::string& pod_security, const std::string& pod_spec) {
  value v = job_json("pp", 2, 1);
  v["spec"]["podSecurity"] = value::string(pod_security);
  if (!pod_spec.empty()) v["spec"]["template"] = value::parse(R"({"spec": )" + pod_spec + "}");
  return desired_pod(api::parse_training_job(v).job, 0, 0);
}

std::vector<std::string> drops(const value& container) {
  std::vector<std::string> out;
  for (const auto& d : container.at("securityContext").at("capabilities").at("drop").as_array())
    out.push_back(d.as_string());
  return out;
}

// What Pod Security "restricted" requires of every pod, all present without a template.
TEST(PodSecurityDefaults, RestrictedPodsCarryTheRestrictedProfile) {
  const value spec = pod_for("Restricted", "").at("spec");
  EXPECT_FALSE(spec.at("automountServiceAccountToken").as_bool());
  const auto& psc = spec.at("securityContext");
  EXPECT_TRUE(psc.at("runAsNonRoot").as_bool());
  EXPECT_EQ(psc.at("seccompProfile").at("type").as_string(), "RuntimeDefault");
  const auto& c = spec.at("containers").at(0);
  EXPECT_FALSE(c.at("securityContext").at("allowPrivilegeEscalation").as_bool());
  EXPECT_EQ(drops(c), std::vector<std::string>{"ALL"});
  // The memory-backed /dev/shm stays: restricted allows emptyDir.
  EXPECT_EQ(spec.at("volumes").at(0).at("emptyDir").at("medium").as_string(), "Memory");
}

TEST(PodSecurityDefaults, EveryContainerAndInitContainerIsRestrictedTemplateValuesKept) {
  const value spec = pod_for("Restricted", R"({
    "automountServiceAccountToken": true,
    "securityContext": {"runAsUser": 1000, "fsGroup": 1000,
                        "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}},
    "initContainers": [{"name": "fetch", "securityContext": {"capabilities": {"drop": ["NET_RAW"]}}}],
    "containers": [{"name": "worker", "securityContext": {"readOnlyRootFilesystem": true}},
                   {"name": "sidecar", "securityContext": {"capabilities": {"drop": ["ALL"]}}}]})")
                         .at("spec");
  EXPECT_TRUE(spec.at("automountServiceAccountToken").as_bool());  // the template's choice
  const auto& psc = spec.at("securityContext");
  EXPECT_EQ(psc.at("runAsUser").as_integer(), 1000);
  EXPECT_EQ(psc.at("fsGroup").as_integer(), 1000);
  EXPECT_TRUE(psc.at("runAsNonRoot").as_bool());
  EXPECT_EQ(psc.at("seccompProfile").at("type").as_string(), "Localhost");
  EXPECT_EQ(psc.at("seccompProfile").at("localhostProfile").as_string(), "p.json");
  const auto& init = spec.at("initContainers").at(0);
  EXPECT_EQ(drops(init), (std::vector<std::string>{"NET_RAW", "ALL"}));
  EXPECT_FALSE(init.at("securityContext").at("allowPrivilegeEscalation").as_bool());
  const auto& worker = spec.at("containers").at(0);
  EXPECT_TRUE(worker.at("securityContext").at("readOnlyRootFilesystem").as_bool());
  EXPECT_EQ(drops(worker), std::vector<std::string>{"ALL"});
  EXPECT_EQ(drops(spec.at("containers").at(1)), std::vector<std::string>{"ALL"});  // not twice
}

// Trusted templates pass as written (privileged and allowPrivilegeEscalation false would
// not even validate together); only the unused token stays off by default.
TEST(PodSecurityDefaults, TrustedTemplatesAreLeftAsWritten) {
  const value spec = pod_for("Trusted", R"({"hostNetwork": true,
    "containers": [{"name": "worker", "securityContext": {"privileged": true}}]})")
                         .at("spec");
  EXPECT_FALSE(spec.has_field("securityContext"));
  EXPECT_FALSE(spec.at("automountServiceAccountToken").as_bool());
  const auto& sc = spec.at("containers").at(0).at("securityContext");
  EXPECT_TRUE(sc.at("privileged").as_bool());
  EXPECT_FALSE(sc.has_field("allowPrivilegeEscalation"));
  EXPECT_FALSE(sc.has_field("capabilities"));
}

}  // namespace
}  // namespace ddp3d::op::controller
