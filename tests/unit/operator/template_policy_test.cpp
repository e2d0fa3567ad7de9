#include "operator/api/template_policy.h"

#include <gtest/gtest.h>

#include "job_fixtures.h"

namespace ddp3d::op::api {
namespace {

using testing::parse;

struct RefusedCase {
  std::string pod_spec;  // JSON of spec.template.spec
  std::string want_path;
  std::string want_text;
};

std::vector<FieldError> violations(const std::string& pod_spec,
                                   const std::vector<std::string>& allowed = {"default"}) {
  return restricted_template_violations(parse(R"({"spec": )" + pod_spec + "}"), allowed);
}

const char* kPod = "spec.template.spec";

// Every field the Restricted profile refuses (docs/security.md), one case each; the same
// table runs against the API server's CEL rules in tests/integration/operator.
TEST(TemplatePolicy, EveryRefusedFieldIsNamed) {
  const std::vector<RefusedCase> cases = {
      {R"({"hostNetwork": true})", ".hostNetwork", "must not be true"},
      {R"({"hostPID": true})", ".hostPID", "must not be true"},
      {R"({"hostIPC": true})", ".hostIPC", "must not be true"},
      {R"({"nodeName": "n1"})", ".nodeName", "must not be set"},
      {R"({"serviceAccountName": "admin"})", ".serviceAccountName",
       "service account \"admin\" is not allowed (allowed: \"default\""},
      {R"({"serviceAccount": "admin"})", ".serviceAccount", "\"admin\" is not allowed"},
      {R"({"securityContext": {"runAsUser": 0}})", ".securityContext.runAsUser",
       "must not be 0 (root)"},
      {R"({"securityContext": {"runAsNonRoot": false}})", ".securityContext.runAsNonRoot",
       "must not be false"},
      {R"({"securityContext": {"seccompProfile": {"type": "Unconfined"}}})",
       ".securityContext.seccompProfile.type", "must not be Unconfined"},
      {R"({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}})",
       ".securityContext.appArmorProfile.type", "must not be Unconfined"},
      {R"({"securityContext": {"sysctls": [{"name": "net.core.somaxconn", "value": "1"}]}})",
       ".securityContext.sysctls", "must be empty"},
      {R"({"securityContext": {"windowsOptions": {"hostProcess": true}}})",
       ".securityContext.windowsOptions.hostProcess", "must not be true"},
      {R"({"securityContext": {"seLinuxOptions": {"user": "system_u"}}})",
       ".securityContext.seLinuxOptions.user", "must not be set"},
      {R"({"securityContext": {"seLinuxOptions": {"role": "r"}}})",
       ".securityContext.seLinuxOptions.role", "must not be set"},
      {R"({"securityContext": {"seLinuxOptions": {"type": "spc_t"}}})",
       ".securityContext.seLinuxOptions.type", "must be container_t"},
      {R"({"volumes": [{"name": "d", "emptyDir": {}}, {"name": "h", "hostPath": {"path": "/"}}]})",
       ".volumes[1].hostPath", "hostPath volumes are not allowed"},
      {R"({"volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}]})", ".volumes[0].nfs",
       "volume type nfs is not allowed"},
      {R"({"containers": [{"name": "w", "securityContext": {"privileged": true}}]})",
       ".containers[0].securityContext.privileged", "must not be true"},
      {R"({"containers": [{"name": "w", "securityContext": {"allowPrivilegeEscalation": true}}]})",
       ".containers[0].securityContext.allowPrivilegeEscalation", "must not be true"},
      {R"({"containers": [{"name": "w"},
           {"name": "s", "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}]})",
       ".containers[1].securityContext.capabilities.add", "no capability may be added"},
      {R"({"containers": [{"name": "w", "securityContext": {"runAsUser": 0}}]})",
       ".containers[0].securityContext.runAsUser", "must not be 0 (root)"},
      {R"({"containers": [{"name": "w", "securityContext": {"runAsNonRoot": false}}]})",
       ".containers[0].securityContext.runAsNonRoot", "must not be false"},
      {R"({"containers": [{"name": "w",
           "securityContext": {"seccompProfile": {"type": "Unconfined"}}}]})",
       ".containers[0].securityContext.seccompProfile.type", "must not be Unconfined"},
      {R"({"containers": [{"name": "w", "securityContext": {"procMount": "Unmasked"}}]})",
       ".containers[0].securityContext.procMount", "must be Default or unset"},
      {R"({"containers": [{"name": "w", "ports": [{"containerPort": 80},
           {"containerPort": 81, "hostPort": 81}]}]})",
       ".containers[0].ports[1].hostPort", "must not be set"},
      {R"({"initContainers": [{"name": "i", "securityContext": {"privileged": true}}]})",
       ".initContainers[0].securityContext.privileged", "must not be true"},
      {R"({"initContainers": [{"name": "i", "ports": [{"hostPort": 1}]}]})",
       ".initContainers[0].ports[0].hostPort", "must not be set"},
      {R"({"ephemeralContainers": [{"name": "e", "securityContext": {"privileged": true}}]})",
       ".ephemeralContainers[0].securityContext.privileged", "must not be true"},
  };
  for (const auto& c : cases) {
    const auto errors = violations(c.pod_spec);
    ASSERT_EQ(errors.size(), 1u) << c.pod_spec << " -> " << join(errors);
    EXPECT_EQ(errors[0].path, kPod + c.want_path) << c.pod_spec;
    EXPECT_NE(errors[0].message.find(c.want_text), std::string::npos) << errors[0].to_string();
    EXPECT_NE(errors[0].message.find("spec.podSecurity Restricted"), std::string::npos);
  }
}

// What Pod Security "restricted" allows stays allowed: the policy must not refuse a
// reasonable training template.
TEST(TemplatePolicy, CompliantTemplatePasses) {
  const auto errors = violations(R"({
    "serviceAccountName": "default",
    "automountServiceAccountToken": false,
    "nodeSelector": {"gpu": "h200"},
    "hostNetwork": false, "hostPID": false, "hostIPC": false, "nodeName": "",
    "securityContext": {"runAsUser": 1000, "runAsNonRoot": true, "fsGroup": 1000,
                        "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"},
                        "seLinuxOptions": {"type": "container_t", "level": "s0:c1"}},
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "kitti"}},
                {"name": "cfg", "configMap": {"name": "c"}}, {"name": "tmp", "emptyDir": {}},
                {"name": "s", "secret": {"secretName": "s"}}, {"name": "p", "projected": {}},
                {"name": "d", "downwardAPI": {}}, {"name": "c", "csi": {"driver": "x"}},
                {"name": "e", "ephemeral": {}}],
    "containers": [{"name": "worker", "ports": [{"containerPort": 9400, "hostPort": 0}],
                    "securityContext": {"privileged": false, "allowPrivilegeEscalation": false,
                                        "runAsUser": 1000, "procMount": "Default",
                                        "capabilities": {"add": [], "drop": ["ALL"]},
                                        "seccompProfile": {"type": "RuntimeDefault"}}}]})");
  EXPECT_TRUE(errors.empty()) << join(errors);
}

TEST(TemplatePolicy, EveryViolationIsReportedNotOnlyTheFirst) {
  const auto errors = violations(R"({"hostNetwork": true, "hostPID": true,
    "containers": [{"name": "a", "securityContext": {"privileged": true}},
                   {"name": "b", "securityContext": {"privileged": true}}]})");
  ASSERT_EQ(errors.size(), 4u) << join(errors);
  EXPECT_EQ(errors[2].path, std::string(kPod) + ".containers[0].securityContext.privileged");
  EXPECT_EQ(errors[3].path, std::string(kPod) + ".containers[1].securityContext.privileged");
}

TEST(TemplatePolicy, WrongTypesAreReportedNotCrashedOn) {
  const auto errors = violations(R"({"hostNetwork": "yes", "serviceAccountName": 3,
    "containers": [7, {"securityContext": {"privileged": "true",
                                          "capabilities": {"add": "ALL"}}}],
    "volumes": "none", "securityContext": []})");
  ASSERT_EQ(errors.size(), 4u) << join(errors);
  EXPECT_EQ(errors[0].to_string().rfind("spec.template.spec.hostNetwork: must be a boolean", 0),
            0u);
  EXPECT_EQ(errors[1].path, std::string(kPod) + ".serviceAccountName");
  EXPECT_EQ(errors[2].path, std::string(kPod) + ".containers[1].securityContext.privileged");
  EXPECT_EQ(errors[3].path, std::string(kPod) + ".containers[1].securityContext.capabilities.add");
  EXPECT_TRUE(restricted_template_violations(parse("{}"), {"default"}).empty());
  EXPECT_TRUE(restricted_template_violations(parse(R"({"spec": 1})"), {"default"}).empty());
}

TEST(TemplatePolicy, AllowedServiceAccountsComeFromTheOperator) {
  EXPECT_TRUE(violations(R"({"serviceAccountName": "reader"})", {"default", "reader"}).empty());
  const auto none = violations(R"({"serviceAccountName": "default"})", {});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].message.find("(allowed: none;"), std::string::npos) << none[0].message;
}

TrainingJob job_in(const std::string& ns, const std::string& pod_security,
                   const std::string& pod_spec) {
  auto obj = testing::job_json();
  obj["metadata"]["namespace"] = web::json::value::string(ns);
  obj["spec"]["podSecurity"] = web::json::value::string(pod_security);
  obj["spec"]["template"] = parse(R"({"spec": )" + pod_spec + "}");
  auto parsed = parse_training_job(obj);
  EXPECT_TRUE(parsed.errors.empty()) << join(parsed.errors);
  return parsed.job;
}

TEST(TemplatePolicy, TrustedOnlyInTrustedNamespaces) {
  TemplatePolicy policy;
  policy.trusted_namespaces = {"infra"};
  const std::string privileged =
      R"({"hostNetwork": true, "serviceAccountName": "admin",
          "containers": [{"name": "w", "securityContext": {"privileged": true}}]})";
  EXPECT_TRUE(check_template_policy(job_in("infra", "Trusted", privileged), policy).empty());

  const auto refused = check_template_policy(job_in("ml", "Trusted", privileged), policy);
  ASSERT_EQ(refused.size(), 4u) << join(refused);
  EXPECT_EQ(refused[0].path, "spec.podSecurity");
  EXPECT_NE(refused[0].message.find(R"((--trusted-namespaces: "infra"), not in "ml")"),
            std::string::npos)
      << refused[0].message;
  EXPECT_EQ(refused[1].path, std::string(kPod) + ".hostNetwork");

  // Restricted jobs get the Restricted checks in a trusted namespace too: trust is opt-in.
  EXPECT_EQ(check_template_policy(job_in("infra", "Restricted", privileged), policy).size(), 3u);
  EXPECT_TRUE(check_template_policy(job_in("ml", "Restricted", "{}"), policy).empty());
}

TEST(TemplatePolicy, PodSecurityIsParsedAndDefaultsToRestricted) {
  EXPECT_EQ(parse_training_job(testing::job_json()).job.spec.pod_security,
            PodSecurity::kRestricted);
  auto obj = testing::job_json();
  obj["spec"]["podSecurity"] = web::json::value::string("Privileged");
  const auto parsed = parse_training_job(obj);
  ASSERT_EQ(parsed.errors.size(), 1u);
  EXPECT_EQ(parsed.errors[0].to_string(),
            "spec.podSecurity: unsupported value \"Privileged\" (Restricted, Trusted)");
}

}  // namespace
}  // namespace ddp3d::op::api
