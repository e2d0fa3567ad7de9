#include "operator/controller/desired_objects.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "job_fixtures.h"
#include "operator/api/names.h"
#include "operator/controller/kueue_workload.h"

namespace ddp3d::op::controller {
namespace {

using testing::job;
using testing::job_json;
using web::json::value;

std::vector<std::pair<std::string, std::string>> env_of(const value& pod) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : pod.at("spec").at("containers").at(0).at("env").as_array()) {
    out.emplace_back(e.at("name").as_string(),
                     e.has_field("value") ? e.at("value").as_string() : "<valueFrom>");
  }
  return out;
}

std::vector<std::string> strings(const value& arr) {
  std::vector<std::string> out;
  for (const auto& v : arr.as_array()) out.push_back(v.as_string());
  return out;
}

TEST(EnvContract, ExactlyTheDesignVariables) {
  const auto j = job("pp", 4, 8);
  const value pod = desired_pod(j, 2, 3);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"NNODES", "4"},
      {"NODE_RANK", "2"},
      {"MASTER_ADDR", "pp-node-0.pp.ml.svc"},
      {"PORT", "29500"},
      {"GPUS", "8"},
      {"MASTER_PORT", "29500"},
      {"WORLD_SIZE", "32"},
      {"PET_NNODES", "4"},
      {"PET_NODE_RANK", "2"},
      {"PET_NPROC_PER_NODE", "8"},
      {"PET_MASTER_ADDR", "pp-node-0.pp.ml.svc"},
      {"PET_MASTER_PORT", "29500"},
      {"DDP3D_JOB", "pp"},
      {"DDP3D_ATTEMPT", "3"},
      {"DDP3D_METRICS_PORT", "9400"},
      {"DDP3D_BATCH_WORLD_SIZE", "32"},
      {"DDP3D_RENDEZVOUS_TOKEN", "<valueFrom>"},
  };
  EXPECT_EQ(env_of(pod), want);
}

TEST(EnvContract, AnElasticAttemptOnFewerNodesKeepsTheFullSizesBatchWorld) {
  // 2 of 4 nodes with 8 GPUs each: NNODES and WORLD_SIZE follow the attempt's size; the
  // global batch stays the one defined at 4 nodes.
  auto env = contract_env(job("pp", 4, 8), 1, 5, 2);
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["NNODES"], "2");
  EXPECT_EQ(m["PET_NNODES"], "2");
  EXPECT_EQ(m["WORLD_SIZE"], "16");
  EXPECT_EQ(m["DDP3D_BATCH_WORLD_SIZE"], "32");
  EXPECT_EQ(m["NODE_RANK"], "1");
}

TEST(EnvContract, WorldSizeCountsProcessesNotNodes) {
  // GPUS=0 means one CPU (Gloo) process per node.
  auto env = contract_env(job("pp", 3, 0), 0, 0);
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["WORLD_SIZE"], "3");
  EXPECT_EQ(m["PET_NPROC_PER_NODE"], "1");
  EXPECT_EQ(m["GPUS"], "0");
  env = contract_env(job("pp", 3, 2), 0, 0);
  m = {env.begin(), env.end()};
  EXPECT_EQ(m["WORLD_SIZE"], "6");
}

TEST(DesiredPod, IdentityLabelsOwnerAndDns) {
  const auto j = job("pp", 2, 8);
  const value pod = desired_pod(j, 1, 0);
  const auto& meta = pod.at("metadata");
  EXPECT_EQ(meta.at("name").as_string(), "pp-node-1");
  EXPECT_EQ(meta.at("namespace").as_string(), "ml");
  EXPECT_EQ(meta.at("labels").at("ddp3d.io/job-name").as_string(), "pp");
  EXPECT_EQ(meta.at("labels").at("ddp3d.io/node-rank").as_string(), "1");
  EXPECT_EQ(meta.at("labels").at("ddp3d.io/attempt").as_string(), "0");
  const auto& ref = meta.at("ownerReferences").at(0);
  EXPECT_EQ(ref.at("apiVersion").as_string(), "ddp3d.io/v1alpha1");
  EXPECT_EQ(ref.at("kind").as_string(), "TrainingJob");
  EXPECT_EQ(ref.at("name").as_string(), "pp");
  EXPECT_EQ(ref.at("uid").as_string(), "uid-1");
  EXPECT_TRUE(ref.at("controller").as_bool());
  EXPECT_TRUE(ref.at("blockOwnerDeletion").as_bool());
  const auto& spec = pod.at("spec");
  EXPECT_EQ(spec.at("hostname").as_string(), "pp-node-1");
  EXPECT_EQ(spec.at("subdomain").as_string(), "pp");
  EXPECT_EQ(spec.at("restartPolicy").as_string(), "Never");
  const auto& c = spec.at("containers").at(0);
  EXPECT_EQ(c.at("name").as_string(), "worker");
  EXPECT_EQ(c.at("image").as_string(), "ddp3d/worker:1");
  EXPECT_EQ(strings(c.at("command")), (std::vector<std::string>{"bash", "tools/dist_train.sh"}));
  EXPECT_EQ(strings(c.at("args")),
            (std::vector<std::string>{"configs/pointpillars/pp.yaml", "8", "--work-dir",
                                      "/data/work", "--resume", "auto"}));
  EXPECT_EQ(c.at("resources").at("limits").at("nvidia.com/gpu").as_string(), "8");
  // Room for the checkpoint on SIGTERM (the launcher gives its ranks 30 s).
  EXPECT_EQ(spec.at("terminationGracePeriodSeconds").as_integer(), 60);
}

TEST(DesiredObjects, EveryDerivedObjectCarriesTheRecommendedLabels) {
  auto j = job("pp", 2, 0);
  j.spec.elastic = api::ElasticSpec{1, 60, 300};
  const std::vector<std::pair<std::string, value>> objects = {
      {"rank", desired_pod(j, 0, 0)},
      {"grow-probe", desired_grow_probe(j, 0, 0)},
      {"rendezvous", desired_service(j)},
      {"network-policy", desired_network_policy(j, "ddp3d-system")},
      {"rendezvous-token", desired_rendezvous_secret(j, 0)},
      {"gang", desired_pod_group(j, 0, "scheduling.k8s.io/v1alpha2")},
      {"workload", kueue::desired_workload(j, "team-a", std::nullopt)},
  };
  for (const auto& [component, object] : objects) {
    const value& labels = object.at("metadata").at("labels");
    EXPECT_EQ(labels.at("app.kubernetes.io/name").as_string(), "ddp3d") << component;
    EXPECT_EQ(labels.at("app.kubernetes.io/instance").as_string(), "pp") << component;
    EXPECT_EQ(labels.at("app.kubernetes.io/component").as_string(), component);
    EXPECT_EQ(labels.at("app.kubernetes.io/managed-by").as_string(), "ddp3d-operator") << component;
    EXPECT_EQ(labels.at(api::kLabelJobName).as_string(), "pp") << component;
  }
}

TEST(DesiredPod, ResumeAutoIsOptOutAndAnExplicitResumeWins) {
  value v = job_json("pp", 1, 0);
  v["spec"]["runPolicy"] = value::parse(R"({"autoResume": false})");
  const value off = desired_pod(api::parse_training_job(v).job, 0, 0);
  const auto off_args = strings(off.at("spec").at("containers").at(0).at("args"));
  EXPECT_EQ(std::count(off_args.begin(), off_args.end(), "--resume"), 0);
  v = job_json("pp", 1, 0);
  v["spec"]["args"] = value::parse(R"(["--resume=/ckpt/epoch_3.pth"])");
  const value own = desired_pod(api::parse_training_job(v).job, 0, 0);
  EXPECT_EQ(strings(own.at("spec").at("containers").at(0).at("args")).back(),
            "--resume=/ckpt/epoch_3.pth");
}

TEST(DesiredPod, TemplateGracePeriodIsKept) {
  value v = job_json("pp", 1, 0);
  v["spec"]["template"] = value::parse(R"({"spec": {"terminationGracePeriodSeconds": 300}})");
  const value pod = desired_pod(api::parse_training_job(v).job, 0, 0);
  EXPECT_EQ(pod.at("spec").at("terminationGracePeriodSeconds").as_integer(), 300);
}

TEST(DesiredPod, NoGpuLimitForCpuJobs) {
  const value pod = desired_pod(job("pp", 1, 0), 0, 0);
  EXPECT_FALSE(pod.at("spec").at("containers").at(0).has_field("resources"));
}

TEST(DesiredPod, MergesTheUserTemplate) {
  value v = job_json("pp", 2, 4);
  v["spec"]["env"] = value::parse(R"([{"name": "NCCL_DEBUG", "value": "INFO"}])");
  v["spec"]["template"] = value::parse(R"({
    "metadata": {"labels": {"team": "perception", "ddp3d.io/attempt": "99"},
                 "annotations": {"a": "b"}, "name": "ignored"},
    "spec": {
      "nodeSelector": {"gpu": "h100"},
      "tolerations": [{"key": "gpu", "operator": "Exists"}],
      "volumes": [{"name": "data", "hostPath": {"path": "/data"}}],
      "restartPolicy": "Always",
      "containers": [{"name": "trainer", "image": "tpl-image",
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
        "resources": {"requests": {"cpu": "8"}, "limits": {"memory": "64Gi"}},
        "env": [{"name": "FROM_TEMPLATE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]},
        {"name": "sidecar", "image": "busybox"}]}})");
  const auto j = api::parse_training_job(v).job;
  const value pod = desired_pod(j, 0, 1);
  const auto& meta = pod.at("metadata");
  EXPECT_EQ(meta.at("name").as_string(), "pp-node-0");
  EXPECT_EQ(meta.at("labels").at("team").as_string(), "perception");
  EXPECT_EQ(meta.at("labels").at("ddp3d.io/attempt").as_string(), "1");  // ours wins
  EXPECT_EQ(meta.at("annotations").at("a").as_string(), "b");
  const auto& spec = pod.at("spec");
  EXPECT_EQ(spec.at("nodeSelector").at("gpu").as_string(), "h100");
  EXPECT_EQ(spec.at("tolerations").size(), 1u);
  EXPECT_EQ(spec.at("volumes").at(0).at("name").as_string(), "data");
  EXPECT_EQ(spec.at("restartPolicy").as_string(), "Never");
  ASSERT_EQ(spec.at("containers").size(), 2u);
  const auto& c = spec.at("containers").at(0);
  EXPECT_EQ(c.at("name").as_string(), "trainer");
  EXPECT_EQ(c.at("image").as_string(), "ddp3d/worker:1");  // spec.image overrides the template
  EXPECT_EQ(c.at("volumeMounts").at(0).at("mountPath").as_string(), "/data");
  EXPECT_EQ(c.at("resources").at("requests").at("cpu").as_string(), "8");
  EXPECT_EQ(c.at("resources").at("limits").at("memory").as_string(), "64Gi");
  EXPECT_EQ(c.at("resources").at("limits").at("nvidia.com/gpu").as_string(), "4");
  const auto env = env_of(pod);
  ASSERT_EQ(env.size(), 19u);
  EXPECT_EQ(env[0].first, "NNODES");
  EXPECT_EQ(env[17], (std::pair<std::string, std::string>{"FROM_TEMPLATE", "<valueFrom>"}));
  EXPECT_EQ(env[18], (std::pair<std::string, std::string>{"NCCL_DEBUG", "INFO"}));
  EXPECT_EQ(spec.at("containers").at(1).at("name").as_string(), "sidecar");
  EXPECT_FALSE(spec.at("containers").at(1).has_field("env"));
}

std::vector<std::pair<std::string, int>> ports_of(const value& container) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& p : container.at("ports").as_array())
    out.emplace_back(p.at("name").as_string(), p.at("containerPort").as_integer());
  return out;
}

TEST(DesiredPod, EveryLocalRankHasANamedMetricsPortAndThePodIsAnnotated) {
  const value pod = desired_pod(job("pp", 2, 4), 1, 0);
  const auto& c = pod.at("spec").at("containers").at(0);
  EXPECT_EQ(ports_of(c),
            (std::vector<std::pair<std::string, int>>{
                {"metrics", 9400}, {"metrics-1", 9401}, {"metrics-2", 9402}, {"metrics-3", 9403}}));
  for (const auto& p : c.at("ports").as_array()) EXPECT_EQ(p.at("protocol").as_string(), "TCP");
  const auto& a = pod.at("metadata").at("annotations");
  EXPECT_EQ(a.at("prometheus.io/scrape").as_string(), "true");
  EXPECT_EQ(a.at("prometheus.io/port").as_string(), "9400");
  EXPECT_EQ(a.at("prometheus.io/path").as_string(), "/metrics");
  // A CPU job runs one process per pod: one port.
  const value cpu = desired_pod(job("pp", 2, 0), 0, 0);
  EXPECT_EQ(ports_of(cpu.at("spec").at("containers").at(0)),
            (std::vector<std::pair<std::string, int>>{{"metrics", 9400}}));
}

TEST(DesiredPod, MetricsPortMovesEnvPortsAndAnnotationTogether) {
  value v = job_json("pp", 2, 2);
  v["spec"]["metricsPort"] = value::number(9600);
  const value pod = desired_pod(api::parse_training_job(v).job, 1, 0);
  const auto env = env_of(pod);
  EXPECT_NE(std::find(env.begin(), env.end(),
                      std::pair<std::string, std::string>{"DDP3D_METRICS_PORT", "9600"}),
            env.end());
  EXPECT_EQ(ports_of(pod.at("spec").at("containers").at(0)),
            (std::vector<std::pair<std::string, int>>{{"metrics", 9600}, {"metrics-1", 9601}}));
  EXPECT_EQ(pod.at("metadata").at("annotations").at("prometheus.io/port").as_string(), "9600");
}

TEST(DesiredPod, TemplatePortsAndScrapeAnnotationsWin) {
  value v = job_json("pp", 1, 2);
  v["spec"]["template"] = value::parse(R"({
    "metadata": {"annotations": {"prometheus.io/scrape": "false"}},
    "spec": {"containers": [{"name": "w", "ports": [
      {"name": "debug", "containerPort": 6006},
      {"name": "metrics", "containerPort": 9400, "hostPort": 9400}]}]}})");
  const value pod = desired_pod(api::parse_training_job(v).job, 0, 0);
  const auto& c = pod.at("spec").at("containers").at(0);
  EXPECT_EQ(ports_of(c), (std::vector<std::pair<std::string, int>>{
                             {"debug", 6006}, {"metrics", 9400}, {"metrics-1", 9401}}));
  EXPECT_EQ(c.at("ports").at(1).at("hostPort").as_integer(), 9400);
  const auto& a = pod.at("metadata").at("annotations");
  EXPECT_EQ(a.at("prometheus.io/scrape").as_string(), "false");
  EXPECT_EQ(a.at("prometheus.io/port").as_string(), "9400");
}

TEST(DesiredPod, DevShmIsAMemoryBackedEmptyDirUnlessTheTemplateMountsOne) {
  const value pod = desired_pod(job("pp", 2, 4), 0, 0);
  const auto& spec = pod.at("spec");
  ASSERT_EQ(spec.at("volumes").size(), 1u);
  EXPECT_EQ(spec.at("volumes").at(0).at("name").as_string(), "ddp3d-shm");
  EXPECT_EQ(spec.at("volumes").at(0).at("emptyDir").at("medium").as_string(), "Memory");
  const auto& mounts = spec.at("containers").at(0).at("volumeMounts");
  ASSERT_EQ(mounts.size(), 1u);
  EXPECT_EQ(mounts.at(0).at("name").as_string(), "ddp3d-shm");
  EXPECT_EQ(mounts.at(0).at("mountPath").as_string(), "/dev/shm");

  value v = job_json("pp", 2, 4);
  v["spec"]["template"] = value::parse(R"({"spec": {
    "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}],
    "containers": [{"name": "w", "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}]}})");
  const value own = desired_pod(api::parse_training_job(v).job, 0, 0);
  ASSERT_EQ(own.at("spec").at("volumes").size(), 1u);
  EXPECT_EQ(own.at("spec").at("volumes").at(0).at("name").as_string(), "dshm");
  EXPECT_EQ(own.at("spec").at("containers").at(0).at("volumeMounts").size(), 1u);
}

TEST(DesiredPod, TemplateCommandIsKept) {
  value v = job_json("pp", 2, 4);
  v["spec"]["template"] = value::parse(
      R"({"spec": {"containers": [{"name": "w", "command": ["torchrun", "train.py"]}]}})");
  const value pod = desired_pod(api::parse_training_job(v).job, 0, 0);
  const auto& c = pod.at("spec").at("containers").at(0);
  EXPECT_EQ(strings(c.at("command")), (std::vector<std::string>{"torchrun", "train.py"}));
  EXPECT_FALSE(c.has_field("args"));
}

TEST(DesiredService, HeadlessAndPublishesNotReady) {
  const value svc = desired_service(job("pp", 2, 8));
  EXPECT_EQ(svc.at("kind").as_string(), "Service");
  EXPECT_EQ(svc.at("metadata").at("name").as_string(), "pp");
  EXPECT_EQ(svc.at("metadata").at("ownerReferences").at(0).at("uid").as_string(), "uid-1");
  const auto& spec = svc.at("spec");
  EXPECT_EQ(spec.at("clusterIP").as_string(), "None");
  EXPECT_TRUE(spec.at("publishNotReadyAddresses").as_bool());
  EXPECT_EQ(spec.at("selector").at("ddp3d.io/job-name").as_string(), "pp");
  EXPECT_EQ(spec.at("ports").at(0).at("port").as_integer(), 29500);
}

// --- spec.network (docs/security.md, "Network") ---------------------------------------------

TEST(DesiredPod, TheRendezvousTokenComesFromTheAttemptsSecret) {
  const value pod = desired_pod(job("pp", 2, 0), 1, 4);
  const auto& env = pod.at("spec").at("containers").at(0).at("env").as_array();
  const auto it = std::find_if(env.begin(), env.end(), [](const value& e) {
    return e.at("name").as_string() == "DDP3D_RENDEZVOUS_TOKEN";
  });
  ASSERT_NE(it, env.end());
  const auto& ref = it->at("valueFrom").at("secretKeyRef");
  EXPECT_EQ(ref.at("name").as_string(), "pp-rendezvous-4");
  EXPECT_EQ(ref.at("key").as_string(), "token");
  EXPECT_FALSE(it->has_field("value"));  // the token itself never appears in the pod
}

TEST(DesiredPod, NoTokenWhenRendezvousSecretIsOff) {
  auto j = job("pp", 2, 0);
  j.spec.network.rendezvous_secret = false;
  for (const auto& [name, v] : env_of(desired_pod(j, 0, 0))) {
    EXPECT_NE(name, "DDP3D_RENDEZVOUS_TOKEN");
  }
}

TEST(DesiredRendezvousSecret, ImmutableOwnedAndWithoutData) {
  const value s = desired_rendezvous_secret(job("pp", 2, 0), 3);
  EXPECT_EQ(s.at("kind").as_string(), "Secret");
  EXPECT_EQ(s.at("metadata").at("name").as_string(), "pp-rendezvous-3");
  EXPECT_EQ(s.at("metadata").at("labels").at("ddp3d.io/attempt").as_string(), "3");
  EXPECT_EQ(s.at("metadata").at("ownerReferences").at(0).at("kind").as_string(), "TrainingJob");
  EXPECT_TRUE(s.at("immutable").as_bool());
  EXPECT_FALSE(s.has_field("data"));
  EXPECT_FALSE(s.has_field("stringData"));
}

TEST(DesiredPodGroup, AGangOfTheJobsNodesOwnedByTheJob) {
  const value g = desired_pod_group(job("pp", 3, 0), 2, "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(g.at("apiVersion").as_string(), "scheduling.k8s.io/v1alpha2");
  EXPECT_EQ(g.at("kind").as_string(), "PodGroup");
  EXPECT_EQ(g.at("metadata").at("name").as_string(), "pp-gang-2");
  EXPECT_EQ(g.at("metadata").at("namespace").as_string(), "ml");
  EXPECT_EQ(g.at("metadata").at("labels").at("ddp3d.io/attempt").as_string(), "2");
  EXPECT_EQ(g.at("metadata").at("ownerReferences").at(0).at("kind").as_string(), "TrainingJob");
  EXPECT_EQ(g.at("spec").at("schedulingPolicy").at("gang").at("minCount").as_integer(), 3);
}

TEST(DesiredPod, APodOfAGangNamesItsPodGroup) {
  const value p = desired_pod(job("pp", 3, 0), 1, 2, "pp-gang-2");
  EXPECT_EQ(p.at("spec").at("schedulingGroup").at("podGroupName").as_string(), "pp-gang-2");
  EXPECT_FALSE(desired_pod(job("pp", 3, 0), 1, 2).at("spec").has_field("schedulingGroup"));
}

TEST(DesiredNetworkPolicy, PeersOnAllPortsScrapersOnMetricsPortsOnly) {
  auto j = job("pp", 2, 4);
  j.spec.metrics_port = 9400;
  j.spec.network.policy = true;
  j.spec.network.metrics_namespaces = {"monitoring", "ddp3d-system"};
  const value np = desired_network_policy(j, "ddp3d-system");
  EXPECT_EQ(np.at("apiVersion").as_string(), "networking.k8s.io/v1");
  EXPECT_EQ(np.at("metadata").at("name").as_string(), "pp-ranks");
  EXPECT_EQ(np.at("metadata").at("ownerReferences").at(0).at("name").as_string(), "pp");
  const auto& spec = np.at("spec");
  EXPECT_EQ(spec.at("podSelector").at("matchLabels").at("ddp3d.io/job-name").as_string(), "pp");
  EXPECT_EQ(strings(spec.at("policyTypes")), std::vector<std::string>{"Ingress"});
  ASSERT_EQ(spec.at("ingress").size(), 2u);
  const auto& peers = spec.at("ingress").at(0);
  EXPECT_FALSE(peers.has_field("ports"));  // Gloo listens on ephemeral ports
  EXPECT_EQ(peers.at("from")
                .at(0)
                .at("podSelector")
                .at("matchLabels")
                .at("ddp3d.io/job-name")
                .as_string(),
            "pp");
  const auto& scrapes = spec.at("ingress").at(1);
  std::vector<std::string> namespaces;
  for (const auto& f : scrapes.at("from").as_array()) {
    EXPECT_FALSE(f.has_field("podSelector"));
    namespaces.push_back(
        f.at("namespaceSelector").at("matchLabels").at("kubernetes.io/metadata.name").as_string());
  }
  // The operator's namespace first (its progress probe), then the listed ones, once each.
  EXPECT_EQ(namespaces, (std::vector<std::string>{"ddp3d-system", "monitoring"}));
  const auto& port = scrapes.at("ports").at(0);
  EXPECT_EQ(port.at("port").as_integer(), 9400);
  EXPECT_EQ(port.at("endPort").as_integer(), 9403);  // one port per local rank
}

TEST(DesiredNetworkPolicy, WithoutScrapersOnlyThePeersGetIn) {
  auto j = job("pp", 2, 0);
  j.spec.network.policy = true;
  const value np = desired_network_policy(j, "");
  EXPECT_EQ(np.at("spec").at("ingress").size(), 1u);
}

TEST(DesiredObjects, LongJobNameGivesValidNamesEverywhere) {
  const std::string name = "pointpillars-hv-secfpn-8xb6-160e-kitti-3d-car-" + std::string(60, 'z');
  const auto j = job(name, 2, 1);
  const value pod = desired_pod(j, 1, 0);
  const value svc = desired_service(j);
  const std::string pod_name = pod.at("metadata").at("name").as_string();
  const std::string svc_name = svc.at("metadata").at("name").as_string();
  EXPECT_TRUE(api::is_dns1123_label(pod_name)) << pod_name;
  EXPECT_TRUE(api::is_dns1035_label(svc_name)) << svc_name;
  EXPECT_EQ(pod.at("spec").at("hostname").as_string(), pod_name);
  EXPECT_EQ(pod.at("spec").at("subdomain").as_string(), svc_name);
  for (const auto& [k, v] : pod.at("metadata").at("labels").as_object()) {
    EXPECT_TRUE(api::is_label_value(v.as_string())) << k << "=" << v.as_string();
  }
  EXPECT_EQ(master_addr(j), api::pod_name(name, 0) + "." + svc_name + ".ml.svc");
  std::map<std::string, std::string> env;
  for (auto& [k, v] : contract_env(j, 1, 0)) env[k] = v;
  EXPECT_EQ(env["DDP3D_JOB"], name);  // the full name, not the shortened one
  for (const std::string& derived :
       {api::rendezvous_secret_name(name, 1000), api::network_policy_name(name)}) {
    EXPECT_TRUE(api::is_dns1123_label(derived)) << derived;
  }
  EXPECT_NE(api::rendezvous_secret_name(name, 1), api::rendezvous_secret_name(name, 2));
}

}  // namespace
}  // namespace ddp3d::op::controller
