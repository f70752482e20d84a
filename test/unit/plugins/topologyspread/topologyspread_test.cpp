// RemovePodsViolatingTopologySpreadConstraint through the real engine and plan sink. The table
// ports the scenarios of upstream's TestTopologySpreadConstraint (same domain sizes and expected
// eviction counts; pod names pod-<n> in creation order as there), then adds kdesched's own cases
// for its deliberate differences (minDomains, cumulative fit, multi-constraint protection).
#include "pkg/plugins/topologyspread/topologyspread.h"

#include <gtest/gtest.h>

#include <functional>

#include "test/unit/plugins/topologyspread/spread_testing.h"

namespace kdesched::testing {
namespace {

struct Case;
void PrintTo(const Case& c, std::ostream* os);

struct Case {
  std::string name;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::string pluginArgs;   // YAML, indented 6
  std::string evictorArgs;  // YAML, indented 6
  std::string topLevel;     // policy limits
  std::vector<PdbPtr> pdbs;
  std::vector<std::string> wantEvicted;  // exact, in eviction order
  std::vector<std::string> wantRefused;
  int wantCount = -1;  // >= 0: check only how many were evicted

  Case& args(std::string a) {
    pluginArgs = std::move(a);
    return *this;
  }
  Case& evictor(std::string a) {
    evictorArgs = std::move(a);
    return *this;
  }
  Case& limits(std::string a) {
    topLevel = std::move(a);
    return *this;
  }
  Case& pdb(PdbPtr p) {
    pdbs.push_back(std::move(p));
    return *this;
  }
  Case& evicts(std::vector<std::string> v) {
    wantEvicted = std::move(v);
    return *this;
  }
  Case& refuses(std::vector<std::string> v) {
    wantRefused = std::move(v);
    return *this;
  }
  Case& count(int n) {
    wantCount = n;
    return *this;
  }
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

Case make(std::string name, std::vector<NodePtr> nodes, const Pods& pods) {
  Case c;
  c.name = std::move(name);
  c.nodes = std::move(nodes);
  c.pods = pods.out;
  return c;
}

const std::string kNodeFit = "      nodeFit: true\n";  // DefaultEvictor
const std::string kBothKinds = "      constraints: [DoNotSchedule, ScheduleAnyway]\n";
const std::string kNoBalanceFit = "      topologyBalanceNodeFit: false\n";

// Nodes labelled node=<value> and os=<os>, as upstream's 6- and 7-domain cases.
std::vector<NodePtr> osNodes(bool withWinNodeD) {
  std::vector<NodePtr> out;
  const char* values[] = {"linNodeA", "linNodeB", "linNodeC", "winNodeA", "winNodeB", "winNodeC", "winNodeD"};
  for (int i = 0; i < (withWinNodeD ? 7 : 6); ++i)
    out.push_back(NodeBuilder("n" + std::to_string(i + 1))
                      .label("node", values[i])
                      .label("os", i < 3 ? "linux" : "windows")
                      .build());
  return out;
}

std::vector<Case> upstreamCases() {
  std::vector<Case> cs;
  auto c1 = spread(1);
  {
    Pods p;
    p.with(1, "n1", c1).add(1, "n1").add(1, "n2");
    cs.push_back(make("2 domains [2,1] maxSkew 1: balanced, nothing moves", twoZones(), p));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(2, "n1").add(1, "n2");
    cs.push_back(make("2 domains [3,1] maxSkew 1: move 1 to reach [2,2]", twoZones(), p).evicts(ns1({"pod-2"})));
  }
  {
    Pods p;
    p.with(1, "n1", spread(1, kZone, UnsatisfiableAction::ScheduleAnyway)).add(2, "n1").add(1, "n2");
    cs.push_back(make("ScheduleAnyway constraint ignored by default", twoZones(), p));
    cs.push_back(make("ScheduleAnyway constraint balanced when configured", twoZones(), p)
                     .args(kBothKinds)
                     .evicts(ns1({"pod-2"})));
  }
  {
    Pods p;
    p.with(1, "n1", c1, [](PodBuilder& b) { b.bare(); })
        .add(2, "n1", [](PodBuilder& b) { b.bare(); })
        .add(1, "n2", [](PodBuilder& b) { b.bare(); });
    cs.push_back(make("2 domains [3,1]: no pod is evictable, nothing is counted or moved", twoZones(), p));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(2, "n1").add(1, "n2");
    cs.push_back(make("2 domains [3,1] with namespaces exclude and DefaultEvictor nodeFit: move 1", twoZones(), p)
                     .args("      namespaces:\n        exclude: [kube-system]\n")
                     .evictor(kNodeFit)
                     .evicts(ns1({"pod-2"})));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(4, "n1").add(2, "n2");
    cs.push_back(make("2 domains [5,2] maxSkew 1: move 1 to reach [4,3]", twoZones(), p).evicts(ns1({"pod-4"})));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(3, "n1");
    cs.push_back(
        make("2 domains [4,0] maxSkew 1: move 2 to reach [2,2]", twoZones(), p).evicts(ns1({"pod-2", "pod-3"})));
  }
  {
    Pods p;
    p.with(2, "n1", c1, [](PodBuilder& b) { b.nodeSelector(kZone, "zoneA"); })
        .with(1, "n1", c1, [](PodBuilder& b) { b.requiredNodeAffinity("foo", api::NodeSelectorOp::In, {"bar"}); })
        .with(1, "n1", c1);
    cs.push_back(make("2 domains [4,0]: pods pinned by nodeSelector/nodeAffinity stay, only 1 moves", twoZones(), p)
                     .evictor(kNodeFit)
                     .evicts(ns1({"pod-3"})));
  }
  {
    auto nc = spread(1, "node");
    auto windows = [](PodBuilder& b) { b.nodeSelector("os", "windows"); };
    Pods p;
    p.with(3, "n4", nc, windows).with(3, "n5", nc, windows).with(2, "n6", nc, windows);
    cs.push_back(make("6 domains [0,0,0,3,3,2]: linux domains are not eligible (nodeAffinityPolicy Honor), balanced",
                      osNodes(false), p));
    cs.push_back(make("7 domains [0,0,0,3,3,2,0]: two pods move to the new windows node", osNodes(true), p)
                     .evicts(ns1({"pod-5", "pod-2"})));
  }
  {
    auto nc = spread(1, "node");
    auto windows = [](PodBuilder& b) { b.nodeSelector("os", "windows"); };
    Pods p;
    p.with(4, "n4", nc, windows).with(3, "n5", nc, windows).with(1, "n6", nc, windows);
    cs.push_back(make("6 domains [0,0,0,4,3,1]: 1 pod leaves node 4", osNodes(false), p).evicts(ns1({"pod-3"})));
  }
  {
    auto nc = spread(1, "node");
    Pods p;
    p.with(4, "n4", nc, [](PodBuilder& b) { b.nodeSelector("node", "winNodeA"); })
        .with(3, "n5", nc, [](PodBuilder& b) { b.nodeSelector("os", "windows"); })
        .with(1, "n6", nc, [](PodBuilder& b) { b.nodeSelector("os", "windows"); });
    cs.push_back(make("6 domains [0,0,0,4,3,1]: node 4's pods can only run there, nothing moves", osNodes(false), p)
                     .evictor(kNodeFit));
  }
  {
    std::vector<NodePtr> nodes = {NodeBuilder("n1").zone("zoneA").label("region", "boston").build(),
                                  NodeBuilder("n2").zone("zoneB").label("region", "boston").build()};
    auto boston = [](PodBuilder& b) { b.nodeSelector("region", "boston"); };
    Pods p;
    p.with(1, "n1", c1, boston).add(3, "n1", boston);
    cs.push_back(
        make("2 domains [4,0]: nodeSelector matches both zones, move 2", nodes, p).evicts(ns1({"pod-2", "pod-3"})));
  }
  {
    Pods p;
    p.with(1, "n2", c1).add(100, "n3");
    cs.push_back(make("3 domains [0,1,100] maxSkew 1: move 66 to reach [34,33,34]", threeZones(), p).count(66));
  }
  {
    std::vector<NodePtr> nodes = {zoneNode("n1", "zoneA"), zoneNode("n2", "zoneB"), zoneNode("n3", "zoneC"),
                                  zoneNode("n4", "zoneD")};
    Pods p;
    p.with(1, "n2", c1).add(3, "n3").add(5, "n4");
    cs.push_back(make("4 domains [0,1,3,5] maxSkew 1: move 3", nodes, p).count(3));
  }
  {
    Pods p;
    p.with(1, "n1", spread(2)).add(1, "n1").add(6, "n2");
    cs.push_back(make("2 domains [2,6] maxSkew 2: move 1 to reach [3,5]", twoZones(), p).evicts(ns1({"pod-7"})));
  }
  {
    std::vector<NodePtr> nodes = {
        NodeBuilder("n1").zone("zoneA").taint("hardware", "gpu", api::TaintEffect::NoSchedule).build(),
        zoneNode("n2", "zoneB")};
    Pods p;
    p.with(1, "n1", spread(2)).add(1, "n1").add(6, "n2");
    cs.push_back(make("2 domains [2,6] maxSkew 2: the smaller zone's node is tainted, nothing moves", nodes, p)
                     .evictor(kNodeFit));
  }
  {
    std::vector<NodePtr> nodes = {NodeBuilder("n1").zone("zoneA").allocatable(200, 8 * kGi, 10).build(),
                                  zoneNode("n2", "zoneB")};
    Pods p;
    p.with(1, "n1", spread(2)).add(1, "n1").add(6, "n2");
    cs.push_back(
        make("2 domains [2,6] maxSkew 2: the smaller zone has no CPU left, nothing moves", nodes, p).evictor(kNodeFit));
  }
  {
    // upstream descheduler issue #564: zone spread is soft, hostname spread hard.
    std::vector<NodePtr> nodes;
    for (int i = 1; i <= 6; ++i) nodes.push_back(zoneNode("n" + std::to_string(i), i <= 3 ? "zoneA" : "zoneB"));
    auto whoami = selectorOf("app", "whoami");
    auto add = [&](PodBuilder& b) {
      b.spread(spread(1, kZone, UnsatisfiableAction::ScheduleAnyway, whoami));
      b.spread(spread(1, api::kLabelHostname.data(), UnsatisfiableAction::DoNotSchedule, whoami));
    };
    Pods p;
    for (int i = 1; i <= 4; ++i) p.add(1, "n" + std::to_string(i), add, {{"app", "whoami"}});
    cs.push_back(make("Multiple constraints (6 nodes/2 zones, 4 pods): 1 moves", nodes, p)
                     .args(kBothKinds)
                     .evicts(ns1({"pod-2"})));
  }
  {
    Pods p;
    p.with(8, "n1", c1).with(7, "n2", c1);
    cs.push_back(make("3 domains [8,7,0] maxSkew 1: move 5 to reach [5,5,5]", threeZones(), p)
                     .evicts(ns1({"pod-5", "pod-6", "pod-7", "pod-8", "pod-9"})));
  }
  {
    Pods p;
    p.with(5, "n1", c1).with(5, "n2", c1).with(5, "n3", c1);
    cs.push_back(make("3 domains [5,5,5]: balanced", threeZones(), p));
  }
  {
    auto tainted = [](api::TaintEffect e) {
      return std::vector<NodePtr>{zoneNode("n1", "zoneA"),
                                  NodeBuilder("n2").zone("zoneB").taint("taint-test", "test", e).build()};
    };
    api::Toleration tol{"taint-test", api::TolerationOp::Equal, "test", api::TaintEffect::NoSchedule, std::nullopt};
    Pods tolerating;
    tolerating.with(1, "n1", c1, [&](PodBuilder& b) { b.toleration(tol); }).add(1, "n1", [](PodBuilder& b) {
      b.nodeSelector(kZone, "zoneA");
    });
    cs.push_back(make("2 domains [2,0]: the pod tolerating the tainted node moves",
                      tainted(api::TaintEffect::NoSchedule), tolerating)
                     .evicts(ns1({"pod-0"})));
    Pods plain;
    plain.with(1, "n1", c1).add(1, "n1", [](PodBuilder& b) { b.nodeSelector(kZone, "zoneA"); });
    cs.push_back(make("2 domains [2,0]: no pod tolerates the tainted node, nothing moves",
                      tainted(api::TaintEffect::NoSchedule), plain));
    cs.push_back(make("2 domains [2,0]: no pod tolerates the tainted node, DefaultEvictor nodeFit on",
                      tainted(api::TaintEffect::NoSchedule), plain)
                     .evictor(kNodeFit));
    cs.push_back(make("2 domains [2,0]: PreferNoSchedule does not keep pods out",
                      tainted(api::TaintEffect::PreferNoSchedule), plain)
                     .evicts(ns1({"pod-0"})));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(1, "n1");
    auto expr = [](const char* op, const char* value) {
      return std::string("      labelSelector:\n        matchExpressions:\n        - {key: foo, operator: ") + op +
             ", values: [" + value + "]}\n";
    };
    cs.push_back(make("plugin labelSelector matches no pod: nothing moves", twoZones(), p).args(expr("In", "baz")));
    cs.push_back(
        make("plugin labelSelector In matches: move 1", twoZones(), p).args(expr("In", "bar")).evicts(ns1({"pod-1"})));
    cs.push_back(make("plugin labelSelector NotIn matches: move 1", twoZones(), p)
                     .args(expr("NotIn", "baz"))
                     .evicts(ns1({"pod-1"})));
  }
  {
    auto hashed = spread(1);
    hashed.matchLabelKeys = {"pod-template-hash"};
    Pods same;
    same.with(2, "n1", hashed, [](PodBuilder& b) { b.label("pod-template-hash", "foo"); });
    cs.push_back(make("matchLabelKeys, one ReplicaSet [2,0]: move 1", twoZones(), same).evicts(ns1({"pod-1"})));
    Pods different;
    different.with(1, "n1", hashed, [](PodBuilder& b) { b.label("pod-template-hash", "foo"); })
        .with(1, "n1", hashed, [](PodBuilder& b) { b.label("pod-template-hash", "bar"); });
    cs.push_back(make("matchLabelKeys, two ReplicaSets [1,0] each: nothing moves", twoZones(), different));
  }
  {
    Pods p;
    p.with(2, "n1", c1).with(2, "n1", c1, [](PodBuilder& b) { b.terminating(); }).with(2, "n2", c1);
    cs.push_back(make("2 domains [4,2] with 2 terminating pods: they do not count, nothing moves", twoZones(), p));
  }
  {
    std::vector<NodePtr> nodes = {NodeBuilder("n1").zone("zoneA").allocatable(250, 8 * kGi, 9).build(),
                                  NodeBuilder("n2").zone("zoneB").allocatable(1000, 8 * kGi, 9).build(),
                                  NodeBuilder("n3").zone("zoneC").allocatable(1000, 8 * kGi, 9).build()};
    Pods p;
    p.with(2, "n1", c1).with(3, "n2", c1).with(4, "n3", c1);
    cs.push_back(make("3 domains [2,3,4]: not enough CPU in zoneA, nothing moves", nodes, p).evictor(kNodeFit));
    cs.push_back(make("3 domains [2,3,4]: topologyBalanceNodeFit false moves 1 anyway (to force a scale-up)", nodes, p)
                     .args(kNoBalanceFit)
                     .evictor(kNodeFit)
                     .evicts(ns1({"pod-8"})));
  }
  {
    std::vector<NodePtr> nodes = {NodeBuilder("A1").zone("zoneA").allocatable(150, 8 * kGi, 9).build(),
                                  NodeBuilder("B1").zone("zoneB").allocatable(1000, 8 * kGi, 9).build(),
                                  NodeBuilder("C1").zone("zoneC").allocatable(1000, 8 * kGi, 9).build(),
                                  NodeBuilder("A2").zone("zoneA").allocatable(50, 8 * kGi, 9).build(),
                                  NodeBuilder("B2").zone("zoneB").allocatable(1000, 8 * kGi, 9).build(),
                                  NodeBuilder("C2").zone("zoneC").allocatable(1000, 8 * kGi, 9).build()};
    Pods p;
    p.with(1, "A1", c1).with(1, "B1", c1).with(1, "B2", c1).with(2, "C1", c1).with(1, "C2", c1);
    cs.push_back(
        make("3 domains [[1,0],[1,1],[2,1]]: no CPU left in zoneA, nothing moves", nodes, p).evictor(kNodeFit));
  }
  {
    std::vector<NodePtr> nodes;
    for (const char* n : {"A1", "A2", "B1", "B2"})
      nodes.push_back(NodeBuilder(n).zone(n[0] == 'A' ? "zoneA" : "zoneB").allocatable(1000, 8 * kGi, 9).build());
    Pods p;
    p.with(1, "A1", c1).with(4, "A2", c1).with(2, "B1", c1).with(1, "B2", c1);
    cs.push_back(make("2 domains [[1,4],[2,1]] with DefaultEvictor nodeFit: move 1", nodes, p)
                     .evictor(kNodeFit)
                     .evicts(ns1({"pod-4"})));
  }
  {
    // upstream descheduler issue #839: control-plane and infra nodes are tainted and out of the pods' affinity.
    std::vector<NodePtr> nodes = {
        NodeBuilder("controlplane1")
            .zone("zoneA")
            .label(api::kLabelHostname, "cp-1")
            .taint("node-role.kubernetes.io/controlplane", "true", api::TaintEffect::NoSchedule)
            .taint("node-role.kubernetes.io/etcd", "true", api::TaintEffect::NoSchedule)
            .build(),
        NodeBuilder("infraservices1")
            .zone("zoneA")
            .label("infra_service", "true")
            .label(api::kLabelHostname, "infra-1")
            .taint("infra_service", "", api::TaintEffect::NoSchedule)
            .build(),
        NodeBuilder("app1").zone("zoneA").label("app_service", "true").label(api::kLabelHostname, "app-1").build(),
        NodeBuilder("app2").zone("zoneB").label("app_service", "true").label(api::kLabelHostname, "app-2").build()};
    auto hc = spread(1, api::kLabelHostname.data(), UnsatisfiableAction::DoNotSchedule,
                     selectorOf("app.kubernetes.io/name", "service"));
    auto pin = [&](PodBuilder& b) {
      b.spread(hc);
      b.requiredNodeAffinity("app_service", api::NodeSelectorOp::Exists, {});
    };
    Pods p;
    p.add(2, "app1", pin, {{"app.kubernetes.io/name", "service"}})
        .add(2, "app2", pin, {{"app.kubernetes.io/name", "service"}});
    cs.push_back(make("2 domains [3,1] on tainted nodes (upstream #839): nothing moves", nodes, p).evictor(kNodeFit));
  }
  {
    std::vector<NodePtr> nodes;
    for (const char* z : {"A", "B", "C"})
      nodes.push_back(
          NodeBuilder(std::string(z) + "1").zone(std::string("zone") + z).label("kubernetes.io/arch", "arm64").build());
    auto ignore = spread(1);
    ignore.nodeAffinityPolicy = api::InclusionPolicy::Ignore;
    Pods p;
    p.with(1, "A1", ignore, [](PodBuilder& b) { b.nodeSelector("kubernetes.io/arch", "arm64"); })
        .with(1, "A1", ignore,
              [](PodBuilder& b) { b.nodeSelector(kZone, "zoneA").nodeSelector("kubernetes.io/arch", "arm64"); })
        .with(1, "B1", ignore, [](PodBuilder& b) { b.nodeSelector("kubernetes.io/arch", "arm64"); });
    cs.push_back(
        make("3 domains [2,1,0] nodeAffinityPolicy Ignore: the unpinned pod moves", nodes, p).evicts(ns1({"pod-0"})));
  }
  return cs;
}

std::vector<Case> kdeschedCases() {
  std::vector<Case> cs;
  auto c1 = spread(1);
  {
    // Ignore counts the tainted zone as an empty domain; Honor leaves it out, and [3,2] is balanced.
    std::vector<NodePtr> nodes = {
        zoneNode("n1", "zoneA"), zoneNode("n2", "zoneB"),
        NodeBuilder("n3").zone("zoneC").taint("dedicated", "db", api::TaintEffect::NoSchedule).build()};
    Pods ignore;
    ignore.with(3, "n1", c1).with(2, "n2", c1);
    cs.push_back(
        make("nodeTaintsPolicy Ignore: the tainted zone is an empty domain, 1 moves (fit check off)", nodes, ignore)
            .args(kNoBalanceFit)
            .evicts(ns1({"pod-2"})));
    cs.push_back(make("nodeTaintsPolicy Ignore: the tainted zone cannot take the pod (fit check on)", nodes, ignore));
    auto honor = spread(1);
    honor.nodeTaintsPolicy = api::InclusionPolicy::Honor;
    Pods honoring;
    honoring.with(3, "n1", honor).with(2, "n2", honor);
    cs.push_back(make("nodeTaintsPolicy Honor: the tainted zone is not a domain, balanced", nodes, honoring)
                     .args(kNoBalanceFit));
  }
  {
    auto nc = spread(1, "node");
    nc.nodeAffinityPolicy = api::InclusionPolicy::Ignore;
    auto windows = [](PodBuilder& b) { b.nodeSelector("os", "windows"); };
    Pods p;
    p.with(3, "n4", nc, windows).with(3, "n5", nc, windows).with(2, "n6", nc, windows);
    cs.push_back(
        make("nodeAffinityPolicy Ignore: linux domains count as empty, 4 move (fit check off)", osNodes(false), p)
            .args(kNoBalanceFit)
            .evicts(ns1({"pod-5", "pod-4", "pod-2", "pod-1"})));
    cs.push_back(make("nodeAffinityPolicy Ignore: windows pods fit no linux node (fit check on)", osNodes(false), p));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(3, "n1", {}, {{"app", "other"}}).add(1, "n2");
    cs.push_back(make("pods the constraint's selector does not match are not counted", twoZones(), p));
  }
  {
    Pods p;
    p.with(1, "n1", c1)
        .add(2, "n1", [](PodBuilder& b) { b.owner("DaemonSet", "agent"); })
        .add(1, "n1", [](PodBuilder& b) { b.priority(api::kSystemCriticalPriority); })
        .add(1, "n2");
    cs.push_back(make("DaemonSet and system-critical pods are not counted: [1,1] is balanced", twoZones(), p));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(5, "n1");
    cs.push_back(make("per-node limit: the second candidate is refused, the node's others are skipped", twoZones(), p)
                     .limits("maxNoOfPodsToEvictPerNode: 1\n")
                     .evicts(ns1({"pod-3"}))
                     .refuses({"ns1/pod-4 by maxNoOfPodsToEvictPerNode"}));
    cs.push_back(make("total limit 1: one eviction, then the plugin stops", twoZones(), p)
                     .limits("maxNoOfPodsToEvictTotal: 1\n")
                     .evicts(ns1({"pod-3"}))
                     .refuses({"ns1/pod-4 by maxNoOfPodsToEvictTotal"}));
    cs.push_back(make("total limit 0: nothing is evicted, the plugin stops at once", twoZones(), p)
                     .limits("maxNoOfPodsToEvictTotal: 0\n")
                     .refuses({"ns1/pod-3 by maxNoOfPodsToEvictTotal"}));
  }
  {
    Pods p;
    p.with(1, "n1", c1).add(2, "n1").add(1, "n2");
    cs.push_back(make("a PDB without budget refuses the candidate", twoZones(), p)
                     .pdb(pdb("web", "ns1", selectorOf("foo", "bar"), 0))
                     .refuses({"ns1/pod-2 by PodDisruptionBudget ns1/web"}));
  }
  {
    auto md = spread(1);
    md.minDomains = 3;
    Pods a;
    a.with(3, "n1", md).with(1, "n2", md);
    cs.push_back(make("minDomains 3 with 2 zones [3,1]: the scheduler could not place a moved pod, nothing moves",
                      twoZones(), a));
    Pods b;
    b.with(4, "n1", md);
    cs.push_back(
        make("minDomains 3 with 2 zones [4,0]: only 1 of upstream's 2 moves (global minimum is 0)", twoZones(), b)
            .evicts(ns1({"pod-3"})));
    auto met = spread(1);
    met.minDomains = 2;
    Pods c;
    c.with(3, "n1", met).with(1, "n2", met);
    cs.push_back(make("minDomains 2 with 2 zones [3,1]: met, balances as usual", twoZones(), c).evicts(ns1({"pod-2"})));
    auto soft = spread(1, kZone, UnsatisfiableAction::ScheduleAnyway);
    soft.minDomains = 3;
    Pods d;
    d.with(3, "n1", soft).with(1, "n2", soft);
    cs.push_back(
        make("minDomains has no effect on ScheduleAnyway", twoZones(), d).args(kBothKinds).evicts(ns1({"pod-2"})));
  }
  {
    // zone-a: a1,a2 with 2 pods each; zone-b: six nodes with 1 each. Zone skew 2 wants 1 pod out of
    // zone-b, but every zone-b pod is alone on its node: hostname skew would become 2.
    std::vector<NodePtr> nodes = {zoneNode("a1", "zoneA"), zoneNode("a2", "zoneA")};
    for (int i = 1; i <= 6; ++i) nodes.push_back(zoneNode("b" + std::to_string(i), "zoneB"));
    auto both = [](PodBuilder& b) {
      b.spread(spread(1));
      b.spread(spread(1, api::kLabelHostname.data()));
    };
    Pods p;
    p.add(2, "a1", both).add(2, "a2", both);
    for (int i = 1; i <= 6; ++i) p.add(1, "b" + std::to_string(i), both);
    cs.push_back(make("multi-constraint: removing the pod would break its hostname spread, nothing moves", nodes, p));
  }
  {
    // zone-a: three nodes with 1 pod each; zone-b: b1 with 1. Zone skew 2 wants 1 pod in b1, where
    // the hostname spread (min 0 once the pod left) would reach 2.
    std::vector<NodePtr> nodes = {zoneNode("a1", "zoneA"), zoneNode("a2", "zoneA"), zoneNode("a3", "zoneA"),
                                  zoneNode("b1", "zoneB")};
    auto both = [](PodBuilder& b) {
      b.spread(spread(1));
      b.spread(spread(1, api::kLabelHostname.data()));
    };
    Pods p;
    p.add(1, "a1", both).add(1, "a2", both).add(1, "a3", both).add(1, "b1", both);
    cs.push_back(make("multi-constraint: no below-average node takes the pod within its hostname spread", nodes, p));
  }
  {
    // Upstream sends all 66 toward nodes with 10 pod slots; kdesched stops when the slots are planned.
    std::vector<NodePtr> nodes;
    for (const char* z : {"A", "B", "C"})
      nodes.push_back(NodeBuilder(std::string("n") + char('1' + (z[0] - 'A')))
                          .zone(std::string("zone") + z)
                          .allocatable(64000, 64 * kGi, 10)
                          .build());
    Pods p;
    p.with(1, "n2", c1).add(100, "n3");
    cs.push_back(make("cumulative fit: only as many pods move as the small domains have room for", nodes, p).count(19));
  }
  return cs;
}

class TopologySpreadTest : public ::testing::TestWithParam<Case> {};

TEST_P(TopologySpreadTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  for (auto& n : c.nodes) b.add(n);
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "balance", c.pluginArgs, c.evictorArgs, c.topLevel), *b.snapshot());
  if (c.wantCount >= 0) {
    EXPECT_EQ(static_cast<int>(out.evicted.size()), c.wantCount);
  } else {
    EXPECT_EQ(out.evicted, c.wantEvicted);
  }
  EXPECT_EQ(out.refused, c.wantRefused);
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (auto& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Upstream, TopologySpreadTest, ::testing::ValuesIn(upstreamCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Kdesched, TopologySpreadTest, ::testing::ValuesIn(kdeschedCases()), caseName);

TEST(TopologySpread, EarlierEvictionsThisCycleAreNotCounted) {
  // A deschedule plugin (anti-affinity) evicts pod-x first; the balance plugin then sees [2,1]
  // instead of [3,1] and leaves it.
  ClusterBuilder b;
  for (auto& n : twoZones()) b.add(n);
  Pods p;
  p.with(1, "n1", spread(1)).add(1, "n1").add(1, "n2");
  for (auto& pod : p.out) b.add(pod);
  b.add(PodBuilder("pod-x", "ns1").node("n1").label("foo", "bar").antiAffinity("foo", "bar").build());
  std::string policy =
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: test\n  pluginConfig:\n"
      "  - name: DefaultEvictor\n  - name: RemovePodsViolatingInterPodAntiAffinity\n"
      "  - name: RemovePodsViolatingTopologySpreadConstraint\n  plugins:\n    deschedule:\n"
      "      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n    balance:\n"
      "      enabled: [RemovePodsViolatingTopologySpreadConstraint]\n";
  auto out = runPolicy(policy, *b.snapshot());
  EXPECT_EQ(out.evicted, ns1({"pod-x"}));
}

TEST(TopologySpread, NamespacesAreIndependent) {
  ClusterBuilder b;
  for (auto& n : twoZones()) b.add(n);
  for (const char* ns : {"b-team", "a-team"}) {
    for (int i = 0; i < 3; ++i)
      b.add(PodBuilder("web-" + std::to_string(i), ns).node("n1").label("foo", "bar").spread(spread(1)).build());
  }
  auto out = runPolicy(policyWith(kPlugin, "balance"), *b.snapshot());
  EXPECT_EQ(out.evicted, (std::vector<std::string>{"a-team/web-2", "b-team/web-2"}));
}

}  // namespace
}  // namespace kdesched::testing
