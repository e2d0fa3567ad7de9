#include "operator/controller/desired_objects.h"

#include <algorithm>

#include "operator/api/env_contract.h"
#include "operator/api/names.h"
#include "operator/controller/pod_security_defaults.h"

namespace ddp3d::op::controller {

using web::json::value;

namespace {

// Pods' terminationGracePeriodSeconds unless the template sets it: above the launcher's 30 s
// grace for its ranks' checkpoint on SIGTERM.
constexpr int kCheckpointGracePeriodSeconds = 60;

// Returns obj[key] as an object, creating it (or replacing a non-object) first.
value& object_field(value& obj, const char* key) {
  if (!obj.has_field(key) || !obj.at(key).is_object()) obj[key] = value::object();
  return obj[key];
}

value& array_field(value& obj, const char* key) {
  if (!obj.has_field(key) || !obj.at(key).is_array()) obj[key] = value::array();
  return obj[key];
}

value owner_references(const api::TrainingJob& job) {
  value ref = value::object();
  ref["apiVersion"] = value::string(api::kApiVersion);
  ref["kind"] = value::string(api::kKind);
  ref["name"] = value::string(job.meta.name);
  ref["uid"] = value::string(job.meta.uid);
  ref["controller"] = value::boolean(true);
  ref["blockOwnerDeletion"] = value::boolean(true);
  value refs = value::array();
  refs[0] = ref;
  return refs;
}

value env_var(const std::string& name, const std::string& v) {
  value e = value::object();
  e["name"] = value::string(name);
  e["value"] = value::string(v);
  return e;
}

// Adds `port` unless the container already declares one with its name or number (a template
// that sets its own wins).
void add_container_port(value& container, const std::string& name, int number) {
  value& ports = array_field(container, "ports");
  for (const auto& p : ports.as_array()) {
    if ((p.has_field("name") && p.at("name").is_string() && p.at("name").as_string() == name) ||
        (p.has_field("containerPort") && p.at("containerPort").is_integer() &&
         p.at("containerPort").as_integer() == number)) {
      return;
    }
  }
  value p = value::object();
  p["name"] = value::string(name);
  p["containerPort"] = value::number(number);
  p["protocol"] = value::string("TCP");
  ports[ports.size()] = p;
}

bool has_string(const value& obj, const char* key, const std::string& want) {
  return obj.has_field(key) && obj.at(key).is_string() && obj.at(key).as_string() == want;
}

// NCCL's intra-node transport and ddp3d's shared-memory all-reduce (docs/ddp.md) live in
// /dev/shm, which container runtimes cap at 64 MiB by default; a memory-backed emptyDir lifts
// the cap (its pages count against the pod's memory limit). A template that mounts its own
// /dev/shm, or names a volume like ours, keeps what it has.
void add_shared_memory_volume(value& spec, value& container) {
  constexpr const char* kName = "ddp3d-shm";
  if (container.has_field("volumeMounts") && container.at("volumeMounts").is_array()) {
    for (const auto& m : container.at("volumeMounts").as_array()) {
      if (has_string(m, "mountPath", "/dev/shm") || has_string(m, "name", kName)) return;
    }
  }
  value& volumes = array_field(spec, "volumes");
  for (const auto& v : volumes.as_array()) {
    if (has_string(v, "name", kName)) return;
  }
  value volume = value::object();
  volume["name"] = value::string(kName);
  volume["emptyDir"] = value::object();
  volume["emptyDir"]["medium"] = value::string("Memory");
  volumes[volumes.size()] = volume;
  value mount = value::object();
  mount["name"] = value::string(kName);
  mount["mountPath"] = value::string("/dev/shm");
  value& mounts = array_field(container, "volumeMounts");
  mounts[mounts.size()] = mount;
}

}  // namespace

void add_recommended_labels(value& labels, const api::TrainingJob& job,
                            const std::string& component) {
  labels[api::kLabelAppName] = value::string("ddp3d");
  labels[api::kLabelAppInstance] = value::string(api::job_label_value(job.meta.name));
  labels[api::kLabelAppComponent] = value::string(component);
  labels[api::kLabelAppManagedBy] = value::string(api::kManagedBy);
}

value owned_metadata(const api::TrainingJob& job, const std::string& name,
                     const std::string& component) {
  value meta = value::object();
  meta["name"] = value::string(name);
  meta["namespace"] = value::string(job.meta.namespace_);
  value& labels = object_field(meta, "labels");
  labels[api::kLabelJobName] = value::string(api::job_label_value(job.meta.name));
  add_recommended_labels(labels, job, component);
  meta["ownerReferences"] = owner_references(job);
  return meta;
}

std::string metrics_port_name(int local_rank) {
  return local_rank == 0 ? "metrics" : "metrics-" + std::to_string(local_rank);
}

std::string master_addr(const api::TrainingJob& job) {
  return api::pod_name(job.meta.name, 0) + "." + api::service_name(job.meta.name) + "." +
         job.meta.namespace_ + ".svc";
}

std::vector<std::pair<std::string, std::string>> contract_env(const api::TrainingJob& job, int rank,
                                                              int attempt, int size) {
  const auto& s = job.spec;
  const int nodes = size > 0 ? size : s.nnodes;
  const std::string nnodes = std::to_string(nodes);
  const std::string rank_s = std::to_string(rank);
  const std::string addr = master_addr(job);
  const std::string port = std::to_string(s.port);
  const std::string gpus = std::to_string(s.gpus_per_node);
  // Processes per node: GPUS, or one CPU (Gloo) process when GPUS is 0.
  const int nproc = std::max(s.gpus_per_node, 1);
  return {
      {"NNODES", nnodes},
      {"NODE_RANK", rank_s},
      {"MASTER_ADDR", addr},
      {"PORT", port},
      {"GPUS", gpus},
      {"MASTER_PORT", port},
      {"WORLD_SIZE", std::to_string(nodes * nproc)},
      {"PET_NNODES", nnodes},
      {"PET_NODE_RANK", rank_s},
      {"PET_NPROC_PER_NODE", std::to_string(nproc)},
      {"PET_MASTER_ADDR", addr},
      {"PET_MASTER_PORT", port},
      {"DDP3D_JOB", job.meta.name},
      {"DDP3D_ATTEMPT", std::to_string(attempt)},
      {"DDP3D_METRICS_PORT", std::to_string(job.spec.metrics_port)},
      {"DDP3D_BATCH_WORLD_SIZE", std::to_string(s.nnodes * nproc)},
  };
}

value desired_service(const api::TrainingJob& job) {
  const std::string label = api::job_label_value(job.meta.name);
  value svc = value::object();
  svc["apiVersion"] = value::string("v1");
  svc["kind"] = value::string("Service");
  svc["metadata"] = owned_metadata(job, api::service_name(job.meta.name), "rendezvous");
  value& spec = object_field(svc, "spec");
  spec["clusterIP"] = value::string("None");
  // Rendezvous happens before any pod is Ready, so DNS must answer for not-ready pods.
  spec["publishNotReadyAddresses"] = value::boolean(true);
  // Selecting on the job only (not the attempt) keeps the Service stable across restarts;
  // a new attempt's pods reuse the names only after the old pods are gone.
  object_field(spec, "selector")[api::kLabelJobName] = value::string(label);
  value port = value::object();
  port["name"] = value::string("rendezvous");
  port["port"] = value::number(job.spec.port);
  port["targetPort"] = value::number(job.spec.port);
  port["protocol"] = value::string("TCP");
  value ports = value::array();
  ports[0] = port;
  spec["ports"] = ports;
  return svc;
}

value desired_network_policy(const api::TrainingJob& job, const std::string& operator_namespace) {
  const std::string label = api::job_label_value(job.meta.name);
  auto job_pods = [&] {
    value selector = value::object();
    object_field(selector, "matchLabels")[api::kLabelJobName] = value::string(label);
    return selector;
  };
  value np = value::object();
  np["apiVersion"] = value::string("networking.k8s.io/v1");
  np["kind"] = value::string("NetworkPolicy");
  np["metadata"] = owned_metadata(job, api::network_policy_name(job.meta.name), "network-policy");
  value& spec = object_field(np, "spec");
  spec["podSelector"] = job_pods();
  value types = value::array();
  types[0] = value::string("Ingress");
  spec["policyTypes"] = types;
  value& ingress = array_field(spec, "ingress");
  // Rendezvous and Gloo: Gloo's pairs listen on ephemeral ports, so every port, but only
  // from the job's own pods.
  value peers = value::object();
  array_field(peers, "from")[0] = value::object();
  peers["from"][0]["podSelector"] = job_pods();
  ingress[0] = peers;
  // Metrics scrapes: one port per local rank, from the listed namespaces.
  std::vector<std::string> scrapers;
  if (!operator_namespace.empty()) scrapers.push_back(operator_namespace);
  for (const auto& ns : job.spec.network.metrics_namespaces) {
    if (std::find(scrapers.begin(), scrapers.end(), ns) == scrapers.end()) scrapers.push_back(ns);
  }
  if (!scrapers.empty()) {
    value metrics = value::object();
    value& from = array_field(metrics, "from");
    for (size_t i = 0; i < scrapers.size(); ++i) {
      value peer = value::object();
      object_field(object_field(peer, "namespaceSelector"),
                   "matchLabels")["kubernetes.io/metadata.name"] = value::string(scrapers[i]);
      from[i] = peer;
    }
    value port = value::object();
    port["protocol"] = value::string("TCP");
    port["port"] = value::number(job.spec.metrics_port);
    const int last = job.spec.metrics_port + std::max(job.spec.gpus_per_node, 1) - 1;
    if (last > job.spec.metrics_port) port["endPort"] = value::number(last);
    array_field(metrics, "ports")[0] = port;
    ingress[1] = metrics;
  }
  return np;
}

value desired_rendezvous_secret(const api::TrainingJob& job, int attempt) {
  value secret = value::object();
  secret["apiVersion"] = value::string("v1");
  secret["kind"] = value::string("Secret");
  secret["metadata"] =
      owned_metadata(job, api::rendezvous_secret_name(job.meta.name, attempt), "rendezvous-token");
  secret["metadata"]["labels"][api::kLabelAttempt] = value::string(std::to_string(attempt));
  secret["type"] = value::string("Opaque");
  // A token never changes: a new attempt gets a new Secret.
  secret["immutable"] = value::boolean(true);
  return secret;
}

value desired_pod_group(const api::TrainingJob& job, int attempt, const std::string& api_version,
                        int size) {
  value group = value::object();
  group["apiVersion"] = value::string(api_version);
  group["kind"] = value::string("PodGroup");
  group["metadata"] = owned_metadata(job, api::pod_group_name(job.meta.name, attempt), "gang");
  group["metadata"]["labels"][api::kLabelAttempt] = value::string(std::to_string(attempt));
  group["spec"]["schedulingPolicy"]["gang"]["minCount"] =
      value::number(size > 0 ? size : job.spec.nnodes);
  return group;
}

value desired_pod(const api::TrainingJob& job, int rank, int attempt, const std::string& pod_group,
                  int size) {
  const auto& s = job.spec;
  const std::string name = api::pod_name(job.meta.name, rank);
  // Start from the user's template so volumes, nodeSelector, tolerations, resources, extra
  // containers and labels pass through; then set what the contract owns.
  value tpl = s.pod_template.is_object() ? s.pod_template : value::object();
  value pod = value::object();
  pod["apiVersion"] = value::string("v1");
  pod["kind"] = value::string("Pod");
  value meta = tpl.has_field("metadata") && tpl.at("metadata").is_object() ? tpl.at("metadata")
                                                                           : value::object();
  for (const char* k : {"name", "generateName", "namespace", "uid", "resourceVersion",
                        "ownerReferences", "creationTimestamp"}) {
    if (meta.has_field(k)) meta.erase(k);
  }
  meta["name"] = value::string(name);
  meta["namespace"] = value::string(job.meta.namespace_);
  value& labels = object_field(meta, "labels");
  labels[api::kLabelJobName] = value::string(api::job_label_value(job.meta.name));
  labels[api::kLabelNodeRank] = value::string(std::to_string(rank));
  labels[api::kLabelAttempt] = value::string(std::to_string(attempt));
  add_recommended_labels(labels, job, "rank");
  meta["ownerReferences"] = owner_references(job);
  // Annotation-based Prometheus discovery (one port per pod: local rank 0's); the chart's
  // PodMonitor scrapes every local rank's port. A template's own values win (opt-out).
  value& annotations = object_field(meta, "annotations");
  const std::pair<const char*, std::string> scrape[] = {
      {"prometheus.io/scrape", "true"},
      {"prometheus.io/port", std::to_string(job.spec.metrics_port)},
      {"prometheus.io/path", "/metrics"}};
  for (const auto& [k, v] : scrape) {
    if (!annotations.has_field(k)) annotations[k] = value::string(v);
  }
  pod["metadata"] = meta;

  value spec =
      tpl.has_field("spec") && tpl.at("spec").is_object() ? tpl.at("spec") : value::object();
  spec["hostname"] = value::string(name);
  spec["subdomain"] = value::string(api::service_name(job.meta.name));
  // The operator restarts the whole group; a kubelet restarting one rank in place would
  // rejoin a rendezvous that no longer exists.
  spec["restartPolicy"] = value::string("Never");
  if (!pod_group.empty()) spec["schedulingGroup"]["podGroupName"] = value::string(pod_group);
  value& containers = array_field(spec, "containers");
  if (containers.size() == 0) {
    value c = value::object();
    c["name"] = value::string(kWorkerContainer);
    containers[0] = c;
  }
  value& c = containers[0];
  if (!c.has_field("name") || !c.at("name").is_string())
    c["name"] = value::string(kWorkerContainer);
  if (!s.image.empty()) c["image"] = value::string(s.image);
  // A template that sets its own command (e.g. torchrun in a stock PyTorch image) keeps it;
  // otherwise the pod runs the same script as bare metal.
  if (!c.has_field("command") || c.at("command").is_null()) {
    value cmd = value::array();
    cmd[0] = value::string("bash");
    cmd[1] = value::string("tools/dist_train.sh");
    c["command"] = cmd;
    value args = value::array();
    args[0] = value::string(s.config);
    args[1] = value::string(std::to_string(s.gpus_per_node));
    for (size_t i = 0; i < s.args.size(); ++i) args[i + 2] = value::string(s.args[i]);
    const bool has_resume = std::any_of(s.args.begin(), s.args.end(), [](const std::string& a) {
      return a == "--resume" || a.rfind("--resume=", 0) == 0;
    });
    if (s.run_policy.auto_resume && !has_resume) {
      args[args.size()] = value::string("--resume");
      args[args.size()] = value::string("auto");
    }
    c["args"] = args;
  }
  // Time for the ranks to agree on an iteration and write a checkpoint on SIGTERM (the
  // launcher's own grace is 30 s) before the kubelet's SIGKILL; a template may set its own.
  if (!spec.has_field("terminationGracePeriodSeconds"))
    spec["terminationGracePeriodSeconds"] = value::number(kCheckpointGracePeriodSeconds);
  // Contract variables come first so user variables may reference them as $(MASTER_ADDR).
  value env = value::array();
  size_t n = 0;
  for (const auto& [k, v] : contract_env(job, rank, attempt, size)) env[n++] = env_var(k, v);
  if (s.network.rendezvous_secret) {
    value token = value::object();
    token["name"] = value::string(kRendezvousTokenEnv);
    value& ref = object_field(object_field(token, "valueFrom"), "secretKeyRef");
    ref["name"] = value::string(api::rendezvous_secret_name(job.meta.name, attempt));
    ref["key"] = value::string(kRendezvousTokenKey);
    env[n++] = token;
  }
  if (c.has_field("env") && c.at("env").is_array()) {
    for (const auto& e : c.at("env").as_array()) env[n++] = e;
  }
  for (const auto& e : s.env) env[n++] = e;
  c["env"] = env;
  for (int local = 0; local < std::max(s.gpus_per_node, 1); ++local)
    add_container_port(c, metrics_port_name(local), s.metrics_port + local);
  add_shared_memory_volume(spec, c);
  if (s.gpus_per_node > 0) {
    value& resources = object_field(c, "resources");
    object_field(resources, "limits")["nvidia.com/gpu"] =
        value::string(std::to_string(s.gpus_per_node));
  }
  apply_pod_security_defaults(s.pod_security, spec);
  pod["spec"] = spec;
  return pod;
}

value desired_grow_probe(const api::TrainingJob& job, int index, int attempt) {
  const value worker = desired_pod(job, 0, attempt);
  const value& wspec = worker.at("spec");
  value pod = value::object();
  pod["apiVersion"] = value::string("v1");
  pod["kind"] = value::string("Pod");
  value meta = value::object();
  meta["name"] = value::string(api::grow_probe_name(job.meta.name, index));
  meta["namespace"] = value::string(job.meta.namespace_);
  value& labels = object_field(meta, "labels");
  labels[api::kLabelJobName] = value::string(api::job_label_value(job.meta.name));
  labels[api::kLabelAttempt] = value::string(std::to_string(attempt));
  labels[api::kLabelRole] = value::string(api::kRoleGrowProbe);
  add_recommended_labels(labels, job, api::kRoleGrowProbe);
  meta["ownerReferences"] = owner_references(job);
  pod["metadata"] = meta;
  // Where a rank's pod could go, and nothing that makes the probe more than a placeholder.
  value spec = value::object();
  for (const char* k :
       {"nodeSelector", "affinity", "tolerations", "priorityClassName", "schedulerName",
        "runtimeClassName", "securityContext", "topologySpreadConstraints"}) {
    if (wspec.has_field(k)) spec[k] = wspec.at(k);
  }
  spec["restartPolicy"] = value::string("Never");
  spec["terminationGracePeriodSeconds"] = value::number(0);
  spec["automountServiceAccountToken"] = value::boolean(false);
  const value& wc = wspec.at("containers").at(0);
  value c = value::object();
  c["name"] = value::string("probe");
  if (wc.has_field("image")) c["image"] = wc.at("image");
  if (wc.has_field("imagePullPolicy")) c["imagePullPolicy"] = wc.at("imagePullPolicy");
  value cmd = value::array();
  cmd[0] = value::string("sleep");
  cmd[1] = value::string("infinity");
  c["command"] = cmd;
  if (wc.has_field("resources")) c["resources"] = wc.at("resources");
  if (wc.has_field("securityContext")) c["securityContext"] = wc.at("securityContext");
  array_field(spec, "containers")[0] = c;
  pod["spec"] = spec;
  return pod;
}

}  // namespace ddp3d::op::controller
