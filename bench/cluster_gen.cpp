#include "bench/cluster_gen.h"

#include <algorithm>
#include <random>
#include <sstream>
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
std::string zoneOf(int node, int zones) { return "zone-" + std::to_string(node % zones); }
bool ssd(int node) { return node % 2 == 0; }

}  // namespace

std::string generateSnapshotJson(const GenOptions& o, GenStats* stats) {
  std::mt19937 rng(o.seed);
  auto uni = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  GenStats st;
  std::ostringstream out;
  out << R"({"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[)";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };

  const std::vector<std::string> namespaces = {"default", "shop", "payments", "search", "platform", "batch"};
  for (const auto& ns : namespaces) {
    sep();
    out << R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" << ns
        << R"(","labels":{"kubernetes.io/metadata.name":")" << ns << R"(","team":")" << ns << R"("}}})";
  }
  for (int i = 0; i < o.nodes; ++i) {
    sep();
    int maxPods = o.pods / std::max(1, o.nodes) > 60 ? 250 : 110;
    out << R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" << nodeName(i) << R"(","uid":"uid-)" << nodeName(i)
        << R"(","labels":{"kubernetes.io/hostname":")" << nodeName(i) << R"(","kubernetes.io/os":"linux","topology.kubernetes.io/zone":")"
        << zoneOf(i, o.zones) << R"(","node-pool":"pool-)" << (i % 4 == 0 ? "b" : "a") << R"(","disk":")"
        << (ssd(i) ? "ssd" : "hdd") << R"("}},"spec":{)" << (i % 97 == 0 ? R"("taints":[{"key":"dedicated","value":"infra","effect":"NoSchedule"}])" : "")
        << R"(},"status":{"capacity":{"cpu":"32","memory":"128Gi","pods":")" << maxPods
        << R"("},"allocatable":{"cpu":"31500m","memory":"125Gi","pods":")" << maxPods
        << R"("},"conditions":[{"type":"Ready","status":"True"}]}})";
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
    w.nodeAffinity = uni(o.nodeAffinityShare / std::max(0.01, 1 - o.antiAffinityShare - o.spreadShare)) && !w.antiAffinity && !w.spread;
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

  for (const auto& w : workloads) {
    if (!w.pdb) continue;
    ++st.pdbs;
    sep();
    out << R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":")" << w.name << R"(","namespace":")" << w.ns
        << R"(","generation":1},"spec":{"maxUnavailable":1,"selector":{"matchLabels":{"app":")" << w.name
        << R"("}}},"status":{"observedGeneration":1,"disruptionsAllowed":1,"currentHealthy":)" << w.replicas
        << R"(,"desiredHealthy":)" << w.replicas - 1 << R"(,"expectedPods":)" << w.replicas << "}}";
  }

  // Placement: round-robin with a skew (the first tenth of the nodes gets twice the load), so
  // LowNodeUtilization has over- and underutilized nodes; violations are planted on purpose.
  int plantedAnti = 0, plantedAff = 0, plantedSpread = 0;
  int budgetEach = o.violations / 3;
  int cursor = 0;
  int podIndex = 0;
  for (const auto& w : workloads) {
    bool plantAnti = w.antiAffinity && plantedAnti < budgetEach && uni(0.2);
    bool plantSpread = w.spread && plantedSpread < budgetEach && w.replicas >= 4 && uni(0.2);
    int spreadNode = between(0, o.nodes - 1);
    for (int r = 0; r < w.replicas; ++r) {
      int node;
      if (plantSpread) {
        node = (spreadNode + o.zones * r) % o.nodes;  // every replica in one zone
      } else if (w.antiAffinity) {
        node = (cursor + r * 3) % o.nodes;
        if (plantAnti && r == 1) node = cursor % o.nodes;  // a second replica beside the first
      } else {
        node = uni(0.15) ? between(0, std::max(0, o.nodes / 10 - 1)) : (cursor + r) % o.nodes;
      }
      bool plantAff = false;
      if (w.nodeAffinity) {
        if (!ssd(node)) {
          if (plantedAff < budgetEach && uni(0.05)) plantAff = true;
          else node = (node + 1) % o.nodes;  // odd → even: an ssd node
        }
      }
      if (plantAff) ++plantedAff;
      std::string pod = w.name + "-" + w.hash + "-" + std::to_string(podIndex++);
      sep();
      out << R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" << pod << R"(","namespace":")" << w.ns << R"(","uid":"uid-)"
          << pod << R"(","creationTimestamp":"2026-11-01T00:00:00Z","labels":{"app":")" << w.name << R"(","pod-template-hash":")" << w.hash
          << R"(","tier":")" << (r % 2 ? "backend" : "frontend") << R"("},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":")"
          << w.name << "-" << w.hash << R"(","uid":"uid-rs-)" << w.name << R"(","controller":true}]},"spec":{"nodeName":")" << nodeName(node)
          << R"(","priority":)" << w.priority << R"(,"containers":[{"name":"app","image":"registry.example/)" << w.name
          << R"(:1.0","resources":{"requests":{"cpu":")" << w.cpuMilli << R"(m","memory":")" << w.memMi << R"(Mi"},"limits":{"memory":")"
          << w.memMi * 2 << R"(Mi"}}}])";
      if (w.antiAffinity || w.nodeAffinity) {
        out << R"(,"affinity":{)";
        if (w.antiAffinity)
          out << R"("podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":")" << w.name
              << R"("}},"topologyKey":"kubernetes.io/hostname"}]})";
        if (w.antiAffinity && w.nodeAffinity) out << ",";
        if (w.nodeAffinity)
          out << R"("nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"disk","operator":"In","values":["ssd"]}]}]}})";
        out << "}";
      }
      if (w.spread)
        out << R"(,"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":")"
            << w.name << R"("}}}])";
      out << R"(},"status":{"phase":"Running","qosClass":"Burstable","startTime":"2026-11-01T00:00:05Z","conditions":[{"type":"Ready","status":"True"}]}})";
    }
    if (plantAnti) ++plantedAnti;
    if (plantSpread) ++plantedSpread;
    cursor = (cursor + w.replicas) % std::max(1, o.nodes);
  }
  out << "]}\n";
  st.pods = podIndex;
  st.plantedAntiAffinity = plantedAnti;
  st.plantedNodeAffinity = plantedAff;
  st.plantedSpread = plantedSpread;
  if (stats) *stats = st;
  return out.str();
}

}  // namespace kdesched::bench
