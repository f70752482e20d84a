#include "bench/cluster_gen.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace kdesched::bench {
namespace {

struct Workload {
  std::string ns;
  std::string name;
  std::string hash;
  int replicas = 0;
  bool antiAffinity = false;
  bool spread = false;
  bool nodeAffinity = false;
  bool pdb = false;
  int cpuMilli = 100;
  int memMi = 128;
  int priority = 0;
};

std::string nodeName(int i) { return "node-" + std::to_string(i); }

// A UID in the API server's form (a canonical version-4 UUID), unique per kind and index, so the
// generated objects cost what real ones do (kdesched keeps such UIDs as 16 bytes).
std::string fakeUid(unsigned kind, unsigned long long index) {
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-0000-4000-8000-%012llx", kind, index);
  return buf;
}
std::string zoneOf(int node, int zones) { return "zone-" + std::to_string(node % zones); }
bool ssd(int node) { return node % 2 == 0; }

constexpr const char* kCreated = "2026-11-01T00:00:00Z";
constexpr const char* kStarted = "2026-11-01T00:00:05Z";

// Writes objects separated as the format needs.
class Emitter {
 public:
  explicit Emitter(GenFormat f) : format_(f) {
    if (format_ == GenFormat::List)
      out_ << R"({"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[)";
  }
  std::ostringstream& next() {
    if (format_ == GenFormat::List && !first_) out_ << ",\n";
    if (format_ == GenFormat::NdJson && !first_) out_ << "\n";
    first_ = false;
    return out_;
  }
  std::string finish() {
    out_ << (format_ == GenFormat::List ? "]}\n" : "\n");
    return out_.str();
  }

 private:
  GenFormat format_;
  bool first_ = true;
  std::ostringstream out_;
};

std::vector<std::string> namespaceNames(int n) {
  std::vector<std::string> names = {"default", "shop", "payments", "search", "platform", "batch"};
  names.resize(static_cast<std::size_t>(std::max(1, std::min(n, 6))));
  for (int i = 6; i < n; ++i) names.push_back("ns-" + std::to_string(i));
  return names;
}

// The fields the API server adds to a pod created by `kubectl create` and run by a kubelet (kwok).
void wirePodMetadata(std::ostringstream& out, int rv) {
  out << R"(,"resourceVersion":")" << rv << R"(","generation":1,"managedFields":[)"
      << R"({"manager":"kubectl-create","operation":"Update","apiVersion":"v1","time":")" << kCreated
      << R"(","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{}},)"
         R"("f:ownerReferences":{".":{},"k:{\"uid\":\"0\"}":{}}},"f:spec":{"f:affinity":{},"f:containers":{"k:{\"name\":\"app\"}":{".":{},)"
         R"("f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},)"
         R"("f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},)"
         R"("f:enableServiceLinks":{},"f:nodeName":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},)"
         R"("f:terminationGracePeriodSeconds":{}}}},)"
      << R"({"manager":"kwok","operation":"Update","apiVersion":"v1","time":")" << kStarted
      << R"(","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},)"
         R"("f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},)"
         R"("f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},)"
         R"("f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},)"
         R"("f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.0.1\"}":{".":{},"f:ip":{}}},)"
         R"("f:startTime":{}}},"subresource":"status"}])";
}

void wirePodSpecExtras(std::ostringstream& out, int podIndex) {
  out << R"(,"volumes":[{"name":"kube-api-access-)" << podIndex % 100000
      << R"(","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},)"
         R"({"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},)"
         R"({"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],)"
         R"("defaultMode":420}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)"
         R"("serviceAccountName":"default","serviceAccount":"default","securityContext":{},"schedulerName":"default-scheduler",)"
         R"("tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},)"
         R"({"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],)"
         R"("preemptionPolicy":"PreemptLowerPriority","enableServiceLinks":true)";
}

void wireContainerExtras(std::ostringstream& out) {
  out << R"(,"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"POD_NAME","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}}],)"
         R"("ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],)"
         R"("volumeMounts":[{"name":"kube-api-access","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],)"
         R"("readinessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},)"
         R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent")";
}

void wirePodStatus(std::ostringstream& out, const std::string& image, int node, int podIndex) {
  std::string ip = "10.244." + std::to_string((podIndex >> 8) & 255) + "." + std::to_string(podIndex & 255);
  std::string hostIp = "10.0." + std::to_string((node >> 8) & 255) + "." + std::to_string(node & 255);
  out << R"(,"status":{"phase":"Running","conditions":[)";
  for (const char* t : {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"})
    out << (std::string(t) == "PodReadyToStartContainers" ? "" : ",") << R"({"type":")" << t
        << R"(","status":"True","lastProbeTime":null,"lastTransitionTime":")" << kStarted << R"("})";
  out << R"(],"hostIP":")" << hostIp << R"(","hostIPs":[{"ip":")" << hostIp << R"("}],"podIP":")" << ip
      << R"(","podIPs":[{"ip":")" << ip << R"("}],"startTime":")" << kStarted
      << R"(","containerStatuses":[{"name":"app","state":{"running":{"startedAt":")" << kStarted
      << R"("}},"lastState":{},"ready":true,"restartCount":0,"image":")" << image
      << R"(","imageID":"docker-pullable://)" << image
      << R"(@sha256:4c1e997385b8fb4ad4d1d3c7e5af7ff3f882e5d1f7b3b5a6c9e1f0a2b3c4d5e6","containerID":"containerd://)"
      << std::hex << (0x9e3779b97f4a7c15ULL * static_cast<unsigned long long>(podIndex + 1)) << std::dec
      << R"(","started":true}],"qosClass":"Burstable"})";
}

// A number in [0, 1) from (seed, salt, index) by splitmix64, apart from the cluster's random
// stream: adding metrics changes nothing else in the snapshot.
double unitHash(std::uint32_t seed, std::uint64_t salt, std::uint64_t i) {
  std::uint64_t x = (static_cast<std::uint64_t>(seed) << 32) ^ (salt * 0x9e3779b97f4a7c15ULL) ^ i;
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

// The usage GenOptions::metrics describes, collected pod by pod as the pods are written.
class UsageModel {
 public:
  UsageModel(const GenOptions& o, bool dense)
      : seed_(o.seed),
        allocCpuMilli_(dense ? 95500 : 31500),
        nodeCpuNano_(o.nodes, kSystemCpuNano),
        nodeMemKi_(o.nodes, kSystemMemKi),
        factor_(o.nodes) {
    const int hot = o.hotShare > 0 ? std::max(1, o.nodes / 10) : 0;
    for (int i = 0; i < o.nodes; ++i)
      factor_[i] = i < hot ? 1.2 + 0.3 * unitHash(seed_, 1, i) : 0.8 + 0.4 * unitHash(seed_, 1, i);
  }

  void addPod(const std::string& ns, const std::string& name, const std::string& app, int node, int cpuMilli,
              int memMi) {
    const double f = factor_[node] * (0.8 + 0.4 * unitHash(seed_, 2, pods_.size()));
    const auto cpuNano = std::llround(cpuMilli * f * 1e6);
    const auto memKi = std::llround(memMi * 1024.0 * f);
    nodeCpuNano_[node] += cpuNano;
    nodeMemKi_[node] += memKi;
    pods_.push_back({ns, name, app, cpuNano, memKi});
  }

  // The NodeMetricsList and PodMetricsList documents, one per line.
  std::string metricsLists() const {
    std::ostringstream out;
    out << R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)";
    for (std::size_t i = 0; i < nodeCpuNano_.size(); ++i) {
      const std::string n = nodeName(static_cast<int>(i));
      out << (i ? ",\n" : "\n") << R"({"metadata":{"name":")" << n << R"(","creationTimestamp":")" << kAnswered
          << R"(","labels":{"kubernetes.io/hostname":")" << n << R"("}},"timestamp":")" << kMetricsTime
          << R"(","window":"20.036s","usage":{"cpu":")" << nodeCpuNano_[i] << R"(n","memory":")" << nodeMemKi_[i]
          << R"(Ki"}})";
    }
    out << "]}\n"
        << R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)";
    for (std::size_t i = 0; i < pods_.size(); ++i) {
      const PodUse& p = pods_[i];
      out << (i ? ",\n" : "\n") << R"({"metadata":{"name":")" << p.name << R"(","namespace":")" << p.ns
          << R"(","creationTimestamp":")" << kAnswered << R"(","labels":{"app":")" << p.app << R"("}},"timestamp":")"
          << kMetricsTime << R"(","window":"18.6s","containers":[{"name":"app","usage":{"cpu":")" << p.cpuNano
          << R"(n","memory":")" << p.memKi << R"(Ki"}}]})";
    }
    out << "]}\n";
    return out.str();
  }

  // A Prometheus instant-query answer: each node's cpu usage / allocatable, in [0, 1].
  std::string prometheusAnswer() const {
    std::ostringstream out;
    out << R"({"status":"success","data":{"resultType":"vector","result":[)";
    for (std::size_t i = 0; i < nodeCpuNano_.size(); ++i) {
      const double score = std::min(1.0, static_cast<double>(nodeCpuNano_[i]) / (allocCpuMilli_ * 1e6));
      char value[32];
      std::snprintf(value, sizeof value, "%.4f", score);
      out << (i ? ",\n" : "\n") << R"({"metric":{"instance":")" << nodeName(static_cast<int>(i)) << R"("},"value":[)"
          << kMetricsUnixTime << R"(,")" << value << R"("]})";
    }
    out << "]}}\n";
    return out.str();
  }

 private:
  static constexpr long long kSystemCpuNano = 150'000'000;  // 150m
  static constexpr long long kSystemMemKi = 768 * 1024;     // 768Mi
  static constexpr const char* kAnswered = "2026-11-02T00:00:00Z";
  struct PodUse {
    std::string ns, name, app;
    long long cpuNano = 0, memKi = 0;
  };
  std::uint32_t seed_;
  double allocCpuMilli_;
  std::vector<long long> nodeCpuNano_, nodeMemKi_;
  std::vector<double> factor_;
  std::vector<PodUse> pods_;
};

}  // namespace

std::string generateSnapshotJson(const GenOptions& o, GenStats* stats, std::string* prometheusAnswer) {
  if (o.metrics && o.format != GenFormat::List)
    throw std::invalid_argument("metrics need format List: the API server does not store them");
  std::mt19937 rng(o.seed);
  auto uni = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  GenStats st;
  Emitter em(o.format);
  int rv = 1000;

  // Priority classes: 10% of the workloads run at bench-high (1000). The API server's Priority
  // admission requires spec.priority to match the named class, so pods carry both.
  em.next()
      << R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"bench-high"},"value":1000,)"
         R"("preemptionPolicy":"PreemptLowerPriority","description":"kdesched benchmark workloads"})";

  const std::vector<std::string> namespaces = namespaceNames(o.namespaces);
  st.namespaces = static_cast<int>(namespaces.size());
  for (const auto& ns : namespaces) {
    em.next() << R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" << ns
              << R"(","labels":{"kubernetes.io/metadata.name":")" << ns << R"(","team":")" << ns << R"("}}})";
  }
  const int perNode = o.pods / std::max(1, o.nodes);
  const bool dense = perNode > 60;  // the 110-pods-per-node variant: bigger nodes
  std::optional<UsageModel> usage;
  if (o.metrics || prometheusAnswer) usage.emplace(o, dense);
  for (int i = 0; i < o.nodes; ++i) {
    auto& out = em.next();
    int maxPods = dense ? 250 : 110;
    out << R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" << nodeName(i) << '"';
    if (!o.kwok) out << R"(,"uid":")" << fakeUid(1, static_cast<unsigned long long>(i)) << '"';
    if (o.kwok) out << R"(,"annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"})";
    if (o.wire) out << R"(,"resourceVersion":")" << rv++ << R"(","creationTimestamp":")" << kCreated << '"';
    out << R"(,"labels":{"kubernetes.io/hostname":")" << nodeName(i)
        << R"(","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64",)" << (o.kwok ? R"("type":"kwok",)" : "")
        << R"("topology.kubernetes.io/zone":")" << zoneOf(i, o.zones) << R"(","node-pool":"pool-)"
        << (i % 4 == 0 ? "b" : "a") << R"(","disk":")" << (ssd(i) ? "ssd" : "hdd") << R"("}},"spec":{)"
        << (i % 97 == 0 ? R"("taints":[{"key":"dedicated","value":"infra","effect":"NoSchedule"}])" : "")
        << R"(},"status":{)";
    const char* cpu = dense ? "96" : "32";
    const char* cpuAlloc = dense ? "95500m" : "31500m";
    const char* mem = dense ? "384Gi" : "128Gi";
    const char* memAlloc = dense ? "381Gi" : "125Gi";
    out << R"("capacity":{"cpu":")" << cpu << R"(","memory":")" << mem << R"(","pods":")" << maxPods
        << R"(","ephemeral-storage":"100Gi"},)"
        << R"("allocatable":{"cpu":")" << cpuAlloc << R"(","memory":")" << memAlloc << R"(","pods":")" << maxPods
        << R"(","ephemeral-storage":"95Gi"},"conditions":[)";
    if (o.wire) {
      for (const char* t : {"MemoryPressure", "DiskPressure", "PIDPressure"})
        out << R"({"type":")" << t << R"(","status":"False","lastHeartbeatTime":")" << kStarted
            << R"(","lastTransitionTime":")" << kCreated << R"(","reason":"KubeletHas)"
            << "Sufficient"
            << R"(","message":"kubelet is fine"},)";
    }
    out << R"({"type":"Ready","status":"True"}])";
    if (o.wire)
      out << R"(,"addresses":[{"type":"InternalIP","address":"10.0.)" << ((i >> 8) & 255) << "." << (i & 255)
          << R"("},{"type":"Hostname","address":")" << nodeName(i)
          << R"("}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"",)"
             R"("kernelVersion":"6.1.0","osImage":"Debian GNU/Linux 12","containerRuntimeVersion":"containerd://1.7.0",)"
             R"("kubeletVersion":"v1.36.5","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"})";
    out << "}}";
  }

  // Workloads until the pod budget is used.
  std::vector<Workload> workloads;
  int remaining = o.pods;
  while (remaining > 0) {
    Workload w;
    w.ns = namespaces[static_cast<std::size_t>(between(0, static_cast<int>(namespaces.size()) - 1))];
    w.name = "w" + std::to_string(workloads.size());
    w.hash = std::to_string(100000 + between(0, 899999));
    w.replicas = std::min(remaining, between(2, 30));
    double r = std::uniform_real_distribution<double>(0, 1)(rng);
    w.antiAffinity = r < o.antiAffinityShare;
    w.spread = !w.antiAffinity && r < o.antiAffinityShare + o.spreadShare;
    w.nodeAffinity = uni(o.nodeAffinityShare / std::max(0.01, 1 - o.antiAffinityShare - o.spreadShare)) &&
                     !w.antiAffinity && !w.spread;
    if (!w.nodeAffinity && uni(0.1)) w.nodeAffinity = true;  // some overlap with the other kinds
    w.pdb = uni(o.pdbShare);
    w.cpuMilli = 50 * between(1, 20);
    w.memMi = 64 * between(1, 32);
    w.priority = uni(0.1) ? 1000 : 0;
    // Anti-affinity workloads need distinct nodes for every replica.
    if (w.antiAffinity) w.replicas = std::min(w.replicas, std::max(1, o.nodes / 4));
    remaining -= w.replicas;
    workloads.push_back(w);
  }
  st.workloads = static_cast<int>(workloads.size());

  auto resources = [](std::ostringstream& out, const Workload& w) {
    out << R"("resources":{"requests":{"cpu":")" << w.cpuMilli << R"(m","memory":")" << w.memMi
        << R"(Mi"},"limits":{"memory":")" << w.memMi * 2 << R"(Mi"}})";
  };

  if (o.kwok) {
    // Real ReplicaSets: the garbage collector keeps pods whose controller exists, and the
    // disruption controller reads the expected scale of maxUnavailable PDBs from them.
    for (const auto& w : workloads) {
      auto& out = em.next();
      std::string rs = w.name + "-" + w.hash;
      out << R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":")" << rs << R"(","namespace":")" << w.ns
          << R"(","labels":{"app":")" << w.name << R"(","pod-template-hash":")" << w.hash
          << R"("}},"spec":{"replicas":)" << w.replicas << R"(,"selector":{"matchLabels":{"app":")" << w.name
          << R"(","pod-template-hash":")" << w.hash << R"("}},"template":{"metadata":{"labels":{"app":")" << w.name
          << R"(","pod-template-hash":")" << w.hash
          << R"("}},"spec":{"containers":[{"name":"app","image":"registry.example/)" << w.name << R"(:1.0",)";
      resources(out, w);
      out << "}]}}}}";
    }
  }

  for (const auto& w : workloads) {
    if (!w.pdb) continue;
    ++st.pdbs;
    auto& out = em.next();
    out << R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":")" << w.name
        << R"(","namespace":")" << w.ns
        << R"(","generation":1},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":")" << w.name << R"("}}})";
    if (!o.kwok)
      out << R"(,"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":)" << w.replicas
          << R"(,"desiredHealthy":)" << w.replicas - 1 << R"(,"expectedPods":)" << w.replicas << "}";
    out << "}";
  }

  // Placement: one round-robin over the active nodes (all but the idle tail) for plain and spread
  // replicas, so every active node gets about the same number of pods; anti-affinity replicas
  // every third node from a cursor over all nodes (distinct nodes per workload); `hotShare` of the
  // plain replicas go to the first tenth of the nodes instead (overutilized nodes). Violations
  // are planted on purpose.
  int plantedAnti = 0, plantedAff = 0, plantedSpread = 0;
  int budgetEach = o.violations / 3;
  int rr = 0, antiCursor = 0;
  int podIndex = 0;
  const int idle = o.idleShare > 0 ? std::max(1, static_cast<int>(o.nodes * o.idleShare + 0.5)) : 0;
  const int active = std::max(1, o.nodes - idle);
  for (const auto& w : workloads) {
    bool plantAnti = w.antiAffinity && plantedAnti < budgetEach && uni(0.2);
    bool plantSpread = w.spread && plantedSpread < budgetEach && w.replicas >= 2 && uni(0.2);
    int firstNode = 0;
    for (int r = 0; r < w.replicas; ++r) {
      int node;
      if (plantSpread && r == 1) {
        node = (firstNode + o.zones) % active;  // the second replica in the first one's zone: skew 2
      } else if (w.antiAffinity) {
        node = (antiCursor + r * 3) % o.nodes;
        if (plantAnti && r == 1) node = antiCursor % o.nodes;  // a second replica beside the first
      } else if (!w.spread && uni(o.hotShare)) {
        node = between(0, std::max(0, o.nodes / 10 - 1));
      } else {
        node = rr++ % active;
      }
      if (r == 0) firstNode = node;
      bool plantAff = false;
      if (w.nodeAffinity) {
        if (!ssd(node)) {
          if (plantedAff < budgetEach && uni(0.05))
            plantAff = true;
          else
            node = (node + 1) % o.nodes;  // odd → even: an ssd node
        }
      }
      if (plantAff) ++plantedAff;
      std::string rsName = w.name + "-" + w.hash;
      std::string pod = rsName + "-" + std::to_string(podIndex);
      std::string image = "registry.example/" + w.name + ":1.0";
      auto& out = em.next();
      out << R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" << pod << R"(","namespace":")" << w.ns << '"';
      if (!o.kwok)
        out << R"(,"uid":")" << fakeUid(2, static_cast<unsigned long long>(podIndex)) << R"(","creationTimestamp":")"
            << kCreated << '"';
      if (o.wire) wirePodMetadata(out, rv++);
      out << R"(,"labels":{"app":")" << w.name << R"(","pod-template-hash":")" << w.hash << R"(","tier":")"
          << (r % 2 ? "backend" : "frontend")
          << R"("},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":")" << rsName << R"(","uid":")"
          << (o.kwok ? "@rs:" + w.ns + "/" + rsName : "uid-rs-" + w.name)
          << R"(","controller":true,"blockOwnerDeletion":true}]},)"
          << R"("spec":{"nodeName":")" << nodeName(node) << '"';
      if (w.priority) out << R"(,"priorityClassName":"bench-high")";
      out << R"(,"priority":)" << w.priority << R"(,"containers":[{"name":"app","image":")" << image << R"(",)";
      resources(out, w);
      if (o.wire) wireContainerExtras(out);
      out << "}]";
      if (w.antiAffinity || w.nodeAffinity) {
        out << R"(,"affinity":{)";
        if (w.antiAffinity)
          out << R"("podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":")"
              << w.name << R"("}},"topologyKey":"kubernetes.io/hostname"}]})";
        if (w.antiAffinity && w.nodeAffinity) out << ",";
        if (w.nodeAffinity)
          out << R"("nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"disk","operator":"In","values":["ssd"]}]}]}})";
        out << "}";
      }
      if (w.spread)
        out << R"(,"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":")"
            << w.name << R"("}}}])";
      if (o.wire) wirePodSpecExtras(out, podIndex);
      out << "}";
      if (o.wire) {
        wirePodStatus(out, image, node, podIndex);
      } else if (!o.kwok) {
        out << R"(,"status":{"phase":"Running","qosClass":"Burstable","startTime":")" << kStarted
            << R"(","conditions":[{"type":"Ready","status":"True"}]})";
      }
      out << "}";
      if (usage) usage->addPod(w.ns, pod, w.name, node, w.cpuMilli, w.memMi);
      ++podIndex;
    }
    if (plantAnti) ++plantedAnti;
    if (plantSpread) ++plantedSpread;
    if (w.antiAffinity) antiCursor = (antiCursor + 3 * w.replicas + 1) % std::max(1, o.nodes);
  }
  st.pods = podIndex;
  st.plantedAntiAffinity = plantedAnti;
  st.plantedNodeAffinity = plantedAff;
  st.plantedSpread = plantedSpread;
  if (stats) *stats = st;
  if (prometheusAnswer) *prometheusAnswer = usage->prometheusAnswer();
  std::string out = em.finish();
  if (o.metrics) out += usage->metricsLists();
  return out;
}

}  // namespace kdesched::bench
