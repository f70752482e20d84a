#include "pkg/api/scheduling.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kdesched::api {
namespace {

Node makeNode(std::string name, Labels labels) {
  Node n;
  n.name = std::move(name);
  n.nameSym = Symbol(n.name);
  n.labels = std::move(labels);
  return n;
}

Pod makePod(SchedulingConstraints c) {
  Pod p;
  p.ns = Symbol("default");
  p.name = "p";
  p.scheduling = internConstraints(std::move(c));
  return p;
}

// --- node selector requirements ------------------------------------------------------------

struct RequirementCase {
  const char* name;
  NodeSelectorRequirement req;
  bool matches;
};

class NodeRequirementTest : public ::testing::TestWithParam<RequirementCase> {};

const Labels kNodeLabels{{"zone", "a"}, {"cpus", "8"}, {"gen", "x8"}, {"topology.kubernetes.io/region", "eu"}};

TEST_P(NodeRequirementTest, Matches) {
  const auto& c = GetParam();
  EXPECT_EQ(matchesNodeSelectorRequirement(c.req, kNodeLabels), c.matches) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Operators, NodeRequirementTest,
    ::testing::Values(
        RequirementCase{"In", {"zone", NodeSelectorOp::In, {"b", "a"}}, true},
        RequirementCase{"In other", {"zone", NodeSelectorOp::In, {"c"}}, false},
        RequirementCase{"In absent key", {"rack", NodeSelectorOp::In, {"a"}}, false},
        RequirementCase{"NotIn", {"zone", NodeSelectorOp::NotIn, {"a"}}, false},
        RequirementCase{"NotIn other", {"zone", NodeSelectorOp::NotIn, {"c"}}, true},
        RequirementCase{"NotIn absent key", {"rack", NodeSelectorOp::NotIn, {"a"}}, true},
        RequirementCase{"Exists", {"zone", NodeSelectorOp::Exists, {}}, true},
        RequirementCase{"Exists absent", {"rack", NodeSelectorOp::Exists, {}}, false},
        RequirementCase{"DoesNotExist absent", {"rack", NodeSelectorOp::DoesNotExist, {}}, true},
        RequirementCase{"DoesNotExist present", {"zone", NodeSelectorOp::DoesNotExist, {}}, false},
        RequirementCase{"prefixed key", {"topology.kubernetes.io/region", NodeSelectorOp::In, {"eu"}}, true},
        RequirementCase{"Gt", {"cpus", NodeSelectorOp::Gt, {"4"}}, true},
        RequirementCase{"Gt equal", {"cpus", NodeSelectorOp::Gt, {"8"}}, false},
        RequirementCase{"Lt", {"cpus", NodeSelectorOp::Lt, {"16"}}, true},
        RequirementCase{"Lt equal", {"cpus", NodeSelectorOp::Lt, {"8"}}, false},
        RequirementCase{"Gt non-integer label", {"gen", NodeSelectorOp::Gt, {"1"}}, false},
        RequirementCase{"Lt non-integer label", {"zone", NodeSelectorOp::Lt, {"100"}}, false},
        RequirementCase{"Gt absent key", {"rack", NodeSelectorOp::Gt, {"1"}}, false},
        // Malformed requirements never match, whatever the labels (labels.NewRequirement rejects them).
        RequirementCase{"Gt non-integer value", {"cpus", NodeSelectorOp::Gt, {"x"}}, false},
        RequirementCase{"Gt two values", {"cpus", NodeSelectorOp::Gt, {"1", "2"}}, false},
        RequirementCase{"Gt negative value is not a label value", {"cpus", NodeSelectorOp::Gt, {"-1"}}, false},
        RequirementCase{"In without values", {"zone", NodeSelectorOp::In, {}}, false},
        RequirementCase{"NotIn without values", {"rack", NodeSelectorOp::NotIn, {}}, false},
        RequirementCase{"Exists with values", {"zone", NodeSelectorOp::Exists, {"a"}}, false},
        RequirementCase{"DoesNotExist with bad key", {"bad key", NodeSelectorOp::DoesNotExist, {}}, false},
        RequirementCase{"NotIn with bad value", {"rack", NodeSelectorOp::NotIn, {"not valid"}}, false}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

TEST(NodeSelectorTermTest, EmptyTermMatchesNothing) {
  const Node n = makeNode("n1", kNodeLabels);
  EXPECT_FALSE(matchesNodeSelectorTerm({}, n));
}

TEST(NodeSelectorTermTest, ExpressionsAndFieldsAreAnded) {
  const Node n = makeNode("n1", kNodeLabels);
  const NodeSelectorRequirement zoneA{"zone", NodeSelectorOp::In, {"a"}};
  const NodeSelectorRequirement cpusGt4{"cpus", NodeSelectorOp::Gt, {"4"}};
  const NodeSelectorRequirement zoneB{"zone", NodeSelectorOp::In, {"b"}};
  const NodeSelectorRequirement nameN1{"metadata.name", NodeSelectorOp::In, {"n1"}};
  const NodeSelectorRequirement nameN2{"metadata.name", NodeSelectorOp::In, {"n2"}};
  const NodeSelectorRequirement notN2{"metadata.name", NodeSelectorOp::NotIn, {"n2"}};
  EXPECT_TRUE(matchesNodeSelectorTerm({{zoneA, cpusGt4}, {}}, n));
  EXPECT_FALSE(matchesNodeSelectorTerm({{zoneA, zoneB}, {}}, n));
  EXPECT_TRUE(matchesNodeSelectorTerm({{}, {nameN1}}, n));
  EXPECT_FALSE(matchesNodeSelectorTerm({{}, {nameN2}}, n));
  EXPECT_TRUE(matchesNodeSelectorTerm({{}, {notN2}}, n));
  EXPECT_TRUE(matchesNodeSelectorTerm({{zoneA}, {nameN1}}, n));
  EXPECT_FALSE(matchesNodeSelectorTerm({{zoneB}, {nameN1}}, n));
  EXPECT_FALSE(matchesNodeSelectorTerm({{zoneA}, {nameN2}}, n));
}

TEST(NodeSelectorTermTest, FieldsOnlyTakeOneValueInOrNotIn) {
  const Node n = makeNode("n1", kNodeLabels);
  EXPECT_FALSE(matchesNodeSelectorTerm({{}, {{"metadata.name", NodeSelectorOp::In, {"n1", "n2"}}}}, n));
  EXPECT_FALSE(matchesNodeSelectorTerm({{}, {{"metadata.name", NodeSelectorOp::Exists, {}}}}, n));
  // Fields other than metadata.name read as empty.
  EXPECT_FALSE(matchesNodeSelectorTerm({{}, {{"metadata.uid", NodeSelectorOp::In, {"n1"}}}}, n));
  EXPECT_TRUE(matchesNodeSelectorTerm({{}, {{"metadata.uid", NodeSelectorOp::NotIn, {"n1"}}}}, n));
}

TEST(NodeSelectorTest, TermsAreOredAndNoTermsMatchNothing) {
  const Node n = makeNode("n1", kNodeLabels);
  const NodeSelectorTerm zoneB{{{"zone", NodeSelectorOp::In, {"b"}}}, {}};
  const NodeSelectorTerm zoneA{{{"zone", NodeSelectorOp::In, {"a"}}}, {}};
  EXPECT_TRUE(matchesNodeSelector({{zoneB, zoneA}}, n));
  EXPECT_FALSE(matchesNodeSelector({{zoneB}}, n));
  EXPECT_TRUE(matchesNodeSelector({{NodeSelectorTerm{}, zoneA}}, n));  // an empty term just doesn't match
  EXPECT_FALSE(matchesNodeSelector({}, n));
}

TEST(PodNodeAffinityTest, NodeSelectorAndRequiredAffinity) {
  const Node n = makeNode("n1", kNodeLabels);
  EXPECT_TRUE(podMatchesNodeSelectorAndAffinity(makePod({}), n));

  SchedulingConstraints sel;
  sel.nodeSelector = {{"cpus", "8"}, {"zone", "a"}};
  EXPECT_TRUE(podMatchesNodeSelectorAndAffinity(makePod(sel), n));
  sel.nodeSelector = {{"zone", "b"}};
  EXPECT_FALSE(podMatchesNodeSelectorAndAffinity(makePod(sel), n));

  SchedulingConstraints aff;
  aff.nodeAffinity = NodeAffinity{NodeSelector{{{{{"zone", NodeSelectorOp::In, {"a"}}}, {}}}}, {}};
  EXPECT_TRUE(podMatchesNodeSelectorAndAffinity(makePod(aff), n));
  aff.nodeSelector = {{"zone", "b"}};  // both must hold
  EXPECT_FALSE(podMatchesNodeSelectorAndAffinity(aff, n));

  SchedulingConstraints noTerms;
  noTerms.nodeAffinity = NodeAffinity{NodeSelector{}, {}};
  EXPECT_FALSE(podMatchesNodeSelectorAndAffinity(makePod(noTerms), n));

  SchedulingConstraints preferredOnly;
  preferredOnly.nodeAffinity = NodeAffinity{std::nullopt, {{10, {{{"zone", NodeSelectorOp::In, {"b"}}}, {}}}}};
  EXPECT_TRUE(podMatchesNodeSelectorAndAffinity(makePod(preferredOnly), n));
}

TEST(PodNodeAffinityTest, PreferredScoreSumsMatchingWeights) {
  const Node n = makeNode("n1", kNodeLabels);
  SchedulingConstraints c;
  c.nodeAffinity = NodeAffinity{std::nullopt,
                                {{10, {{{"zone", NodeSelectorOp::In, {"a"}}}, {}}},
                                 {5, {{{"zone", NodeSelectorOp::In, {"b"}}}, {}}},
                                 {3, {{{"cpus", NodeSelectorOp::Gt, {"2"}}}, {}}},
                                 {0, {{{"zone", NodeSelectorOp::Exists, {}}}, {}}},
                                 {7, {}}}};
  EXPECT_EQ(preferredNodeAffinityScore(makePod(c), n), 13);
  EXPECT_EQ(preferredNodeAffinityScore(makePod({}), n), 0);
}

// --- taints and tolerations -----------------------------------------------------------------

struct TolerationCase {
  const char* name;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

class TolerationTest : public ::testing::TestWithParam<TolerationCase> {};

TEST_P(TolerationTest, ToleratesTaint) {
  const auto& c = GetParam();
  EXPECT_EQ(toleratesTaint(c.toleration, c.taint), c.tolerates) << c.name;
}

const Taint kTaint{"dedicated", "gpu", TaintEffect::NoSchedule};

INSTANTIATE_TEST_SUITE_P(
    Matrix, TolerationTest,
    ::testing::Values(
        TolerationCase{"Equal key value effect",
                       {"dedicated", TolerationOp::Equal, "gpu", TaintEffect::NoSchedule, {}},
                       kTaint,
                       true},
        TolerationCase{"Equal empty effect matches all effects",
                       {"dedicated", TolerationOp::Equal, "gpu", TaintEffect::None, {}},
                       kTaint,
                       true},
        TolerationCase{
            "Equal other effect", {"dedicated", TolerationOp::Equal, "gpu", TaintEffect::NoExecute, {}}, kTaint, false},
        TolerationCase{
            "Equal other value", {"dedicated", TolerationOp::Equal, "cpu", TaintEffect::NoSchedule, {}}, kTaint, false},
        TolerationCase{
            "Equal other key", {"team", TolerationOp::Equal, "gpu", TaintEffect::NoSchedule, {}}, kTaint, false},
        TolerationCase{"Exists key", {"dedicated", TolerationOp::Exists, "", TaintEffect::None, {}}, kTaint, true},
        TolerationCase{"Exists key ignores value",
                       {"dedicated", TolerationOp::Exists, "other", TaintEffect::None, {}},
                       kTaint,
                       true},
        TolerationCase{"Exists other key", {"team", TolerationOp::Exists, "", TaintEffect::None, {}}, kTaint, false},
        TolerationCase{"Exists empty key tolerates everything",
                       {"", TolerationOp::Exists, "", TaintEffect::None, {}},
                       kTaint,
                       true},
        TolerationCase{"Exists empty key, effect must still match",
                       {"", TolerationOp::Exists, "", TaintEffect::NoExecute, {}},
                       kTaint,
                       false},
        TolerationCase{
            "Exists empty key, same effect", {"", TolerationOp::Exists, "", TaintEffect::NoSchedule, {}}, kTaint, true},
        TolerationCase{
            "Equal empty key compares values", {"", TolerationOp::Equal, "", TaintEffect::None, {}}, kTaint, false},
        TolerationCase{"Equal empty key and value vs empty-valued taint",
                       {"", TolerationOp::Equal, "", TaintEffect::None, {}},
                       Taint{"any", "", TaintEffect::NoExecute},
                       true},
        TolerationCase{"Equal empty value",
                       {"dedicated", TolerationOp::Equal, "", TaintEffect::None, {}},
                       Taint{"dedicated", "", TaintEffect::PreferNoSchedule},
                       true}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

TEST(TaintsTest, ListsAndFilters) {
  const std::vector<Taint> taints{
      {"a", "1", TaintEffect::NoSchedule}, {"b", "", TaintEffect::PreferNoSchedule}, {"c", "", TaintEffect::NoExecute}};
  const std::vector<Toleration> tolerateA{{"a", TolerationOp::Equal, "1", TaintEffect::None, {}}};
  const std::vector<Toleration> tolerateAC{{"a", TolerationOp::Exists, "", TaintEffect::None, {}},
                                           {"c", TolerationOp::Exists, "", TaintEffect::NoExecute, 300}};
  EXPECT_TRUE(toleratesTaint(tolerateA, taints[0]));
  EXPECT_FALSE(toleratesTaint(tolerateA, taints[1]));
  EXPECT_FALSE(toleratesTaints(tolerateAC, taints));
  EXPECT_TRUE(
      toleratesTaints(tolerateAC, taints, [](const Taint& t) { return t.effect != TaintEffect::PreferNoSchedule; }));
  EXPECT_TRUE(toleratesNoScheduleNoExecute(tolerateAC, taints));  // PreferNoSchedule does not filter
  EXPECT_FALSE(toleratesNoScheduleNoExecute(tolerateA, taints));
  EXPECT_TRUE(toleratesNoScheduleNoExecute({}, {{"b", "", TaintEffect::PreferNoSchedule}}));
  EXPECT_TRUE(toleratesTaints({}, {}));
}

// --- pod requests -----------------------------------------------------------------------------

ContainerResources container(ResourceList requests, ResourceList limits = {}, bool sidecar = false) {
  return {std::move(requests), std::move(limits), sidecar};
}

constexpr std::int64_t kGi = 1024LL * 1024 * 1024 * 1000;  // in milli-units
constexpr std::int64_t kMi = 1024LL * 1024 * 1000;

TEST(PodRequestsTest, SumsAppContainers) {
  const auto r = computePodRequests({container({{"cpu", 100}, {"memory", 128 * kMi}}),
                                     container({{"cpu", 200}, {"memory", 256 * kMi}, {"nvidia.com/gpu", 1000}})},
                                    {}, {});
  EXPECT_EQ(r, (ResourceList{{"cpu", 300}, {"memory", 384 * kMi}, {"nvidia.com/gpu", 1000}}));
  EXPECT_FALSE(r.has(kPods()));
}

TEST(PodRequestsTest, InitContainersSetTheFloor) {
  // An init container larger than the app containers dominates; per resource, not as a whole.
  const auto r = computePodRequests(
      {container({{"cpu", 300}, {"memory", 384 * kMi}})},
      {container({{"cpu", 1000}, {"memory", 64 * kMi}}), container({{"cpu", 500}, {"ephemeral-storage", 2 * kGi}})},
      {});
  EXPECT_EQ(r, (ResourceList{{"cpu", 1000}, {"memory", 384 * kMi}, {"ephemeral-storage", 2 * kGi}}));
}

TEST(PodRequestsTest, OverheadExampleFromTheKubernetesDocs) {
  // Pod Overhead docs: two containers of 500m / 100Mi (limits, so requests default to them) in a
  // RuntimeClass with overhead 250m / 120Mi: the scheduler accounts 1250m and 320Mi.
  const ResourceList each{{"cpu", 500}, {"memory", 100 * kMi}};
  const auto r =
      computePodRequests({container(each, each), container(each, each)}, {}, {{"cpu", 250}, {"memory", 120 * kMi}});
  EXPECT_EQ(r, (ResourceList{{"cpu", 1250}, {"memory", 320 * kMi}}));
}

TEST(PodRequestsTest, SidecarsRunAlongsideLaterInitContainersAndTheApp) {
  // KEP-753 formula. Init order: sidecar S1, init I1, sidecar S2, init I2.
  //   app + sidecars              = cpu 1 + 1 + 0.5 = 2.5, memory 1Gi + 1Gi = 2Gi
  //   I1 while S1 runs            = cpu 2 + 1 = 3,         memory 1Gi + 1Gi = 2Gi
  //   I2 while S1 and S2 run      = cpu 1 + 1.5 = 2.5,     memory 3Gi + 1Gi = 4Gi
  // max per resource: cpu 3, memory 4Gi; plus overhead 250m / 120Mi.
  const auto r = computePodRequests(
      {container({{"cpu", 1000}, {"memory", 1 * kGi}})},
      {container({{"cpu", 1000}, {"memory", 1 * kGi}}, {}, true), container({{"cpu", 2000}, {"memory", 1 * kGi}}),
       container({{"cpu", 500}}, {}, true), container({{"cpu", 1000}, {"memory", 3 * kGi}})},
      {{"cpu", 250}, {"memory", 120 * kMi}});
  EXPECT_EQ(r, (ResourceList{{"cpu", 3250}, {"memory", 4 * kGi + 120 * kMi}}));
}

TEST(PodRequestsTest, SidecarsAddToAppRequests) {
  // Sidecars-only init: the app total plus sidecars wins over any init footprint.
  const auto r = computePodRequests({container({{"cpu", 500}})},
                                    {container({{"cpu", 200}}, {}, true), container({{"cpu", 100}})}, {});
  EXPECT_EQ(r, (ResourceList{{"cpu", 700}}));
}

TEST(PodRequestsTest, OverheadAddsResourcesContainersLack) {
  const auto r = computePodRequests({}, {}, {{"cpu", 250}});
  EXPECT_EQ(r, (ResourceList{{"cpu", 250}}));
  EXPECT_TRUE(computePodRequests({}, {}, {}).empty());
}

// --- QoS ---------------------------------------------------------------------------------------

struct QosCase {
  const char* name;
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> init;
  QosClass want;
};

class QosTest : public ::testing::TestWithParam<QosCase> {};

TEST_P(QosTest, Classifies) {
  const auto& c = GetParam();
  EXPECT_EQ(computeQos(c.containers, c.init), c.want) << c.name;
}

const ResourceList kCpuMem{{"cpu", 500}, {"memory", 256 * kMi}};

INSTANTIATE_TEST_SUITE_P(
    Table, QosTest,
    ::testing::Values(
        QosCase{"nothing", {container({})}, {}, QosClass::BestEffort},
        QosCase{"no containers", {}, {}, QosClass::BestEffort},
        QosCase{"zero requests", {container({{"cpu", 0}})}, {}, QosClass::BestEffort},
        QosCase{"extended resources only",
                {container({{"nvidia.com/gpu", 1000}}, {{"nvidia.com/gpu", 1000}})},
                {},
                QosClass::BestEffort},
        QosCase{"cpu request only", {container({{"cpu", 100}})}, {}, QosClass::Burstable},
        QosCase{"requests equal limits", {container(kCpuMem, kCpuMem)}, {}, QosClass::Guaranteed},
        QosCase{"two guaranteed containers",
                {container(kCpuMem, kCpuMem), container(kCpuMem, kCpuMem)},
                {},
                QosClass::Guaranteed},
        QosCase{"guaranteed plus best-effort container",
                {container(kCpuMem, kCpuMem), container({})},
                {},
                QosClass::Burstable},
        QosCase{"cpu limit only", {container({{"cpu", 500}}, {{"cpu", 500}})}, {}, QosClass::Burstable},
        QosCase{"requests below limits",
                {container({{"cpu", 250}, {"memory", 256 * kMi}}, kCpuMem)},
                {},
                QosClass::Burstable},
        QosCase{"explicit zero cpu request",
                {container({{"cpu", 0}, {"memory", 256 * kMi}}, kCpuMem)},
                {},
                QosClass::Burstable},
        QosCase{"limits only (before defaulting)", {container({}, kCpuMem)}, {}, QosClass::Burstable},
        QosCase{"init container without limits", {container(kCpuMem, kCpuMem)}, {container({})}, QosClass::Burstable},
        QosCase{"guaranteed init container",
                {container(kCpuMem, kCpuMem)},
                {container(kCpuMem, kCpuMem)},
                QosClass::Guaranteed},
        QosCase{"extended resource does not spoil guaranteed",
                {container({{"cpu", 500}, {"memory", 256 * kMi}, {"nvidia.com/gpu", 1000}},
                           {{"cpu", 500}, {"memory", 256 * kMi}, {"nvidia.com/gpu", 1000}})},
                {},
                QosClass::Guaranteed}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

// --- pod affinity terms -----------------------------------------------------------------------

Pod podIn(std::string_view ns, Labels labels) {
  Pod p;
  p.ns = Symbol(ns);
  p.name = "p";
  p.labels = std::move(labels);
  return p;
}

const LabelSelector kAppWeb{{{"app", "web"}}, {}};

TEST(PodAffinityTermTest, OwnNamespaceOnlyWhenNoNamespacesAndNoSelector) {
  const Pod owner = podIn("a", {{"app", "web"}});
  PodAffinityTerm term;
  term.labelSelector = kAppWeb;
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}}), nullptr));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("b", {{"app", "web"}}), nullptr));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "db"}}), nullptr));

  term.namespaces = {"b", "c"};
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("b", {{"app", "web"}}), nullptr));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}}), nullptr));
}

TEST(PodAffinityTermTest, NamespaceSelector) {
  const Pod owner = podIn("a", {{"app", "web"}});
  const Labels teamX{{"team", "x"}};
  const Labels teamY{{"team", "y"}};
  const NamespaceLabelsFn nsLabels = [&](const Symbol& ns) -> const Labels* {
    if (ns.view() == "c") return &teamX;
    if (ns.view() == "d") return &teamY;
    return nullptr;
  };
  PodAffinityTerm term;
  term.labelSelector = kAppWeb;
  term.namespaceSelector = LabelSelector{};  // empty: every namespace
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("zzz", {{"app", "web"}}), nsLabels));
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("zzz", {{"app", "web"}}), nullptr));

  term.namespaceSelector = LabelSelector{{{"team", "x"}}, {}};
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("c", {{"app", "web"}}), nsLabels));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("d", {{"app", "web"}}), nsLabels));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}}), nsLabels));  // not implied

  term.namespaces = {"a"};  // union of the list and the selector
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}}), nsLabels));
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("c", {{"app", "web"}}), nsLabels));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("d", {{"app", "web"}}), nsLabels));

  // Unknown namespace labels read as none: NotIn/DoesNotExist selectors still match.
  term.namespaces.clear();
  term.namespaceSelector = LabelSelector{{}, {{"team", LabelSelectorOp::DoesNotExist, {}}}};
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("unknown", {{"app", "web"}}), nsLabels));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("c", {{"app", "web"}}), nsLabels));
}

TEST(PodAffinityTermTest, NullLabelSelectorSelectsNoPod) {
  const Pod owner = podIn("a", {{"version", "v1"}});
  PodAffinityTerm term;
  term.matchLabelKeys = {"version"};
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("a", {{"version", "v1"}}), nullptr));
  term.labelSelector = LabelSelector{};  // empty selects every pod
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("a", {{"version", "v1"}}), nullptr));
}

TEST(PodAffinityTermTest, MatchAndMismatchLabelKeys) {
  const Pod owner = podIn("a", {{"app", "web"}, {"version", "v1"}, {"tenant", "t1"}});
  PodAffinityTerm term;
  term.labelSelector = kAppWeb;
  term.matchLabelKeys = {"version", "absent-on-owner"};
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}, {"version", "v1"}}), nullptr));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}, {"version", "v2"}}), nullptr));
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}}), nullptr));

  term.matchLabelKeys.clear();
  term.mismatchLabelKeys = {"tenant"};
  EXPECT_FALSE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}, {"tenant", "t1"}}), nullptr));
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}, {"tenant", "t2"}}), nullptr));
  EXPECT_TRUE(podAffinityTermMatches(term, owner, podIn("a", {{"app", "web"}}), nullptr));
}

// --- ordering ----------------------------------------------------------------------------------

TEST(PodOrderTest, PriorityThenQosThenPreferNoEviction) {
  auto pod = [](std::string name, std::optional<std::int32_t> prio, QosClass qos, bool preferNo = false) {
    Pod p;
    p.name = std::move(name);
    p.priority = prio;
    p.qos = qos;
    p.annotationPreferNoEviction = preferNo;
    return p;
  };
  std::vector<Pod> pods{pod("g100", 100, QosClass::Guaranteed),
                        pod("b100-keep", 100, QosClass::BestEffort, true),
                        pod("b100", 100, QosClass::BestEffort),
                        pod("nil-burst", std::nullopt, QosClass::Burstable),
                        pod("nil-best", std::nullopt, QosClass::BestEffort),
                        pod("neg", -5, QosClass::Guaranteed),
                        pod("u100", 100, QosClass::Burstable),
                        pod("zero", 0, QosClass::Guaranteed)};
  std::stable_sort(pods.begin(), pods.end(), podLessByPriorityLowToHigh);
  std::vector<std::string> order;
  for (const auto& p : pods) order.push_back(p.name);
  EXPECT_EQ(order,
            (std::vector<std::string>{"nil-best", "nil-burst", "neg", "zero", "b100", "b100-keep", "u100", "g100"}));
  for (const auto& p : pods) EXPECT_FALSE(podLessByPriorityLowToHigh(p, p)) << p.name;  // irreflexive
}

}  // namespace
}  // namespace kdesched::api
