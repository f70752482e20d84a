#include "pkg/api/types.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace kdesched::api {
namespace {

TEST(TypesTest, EnumNames) {
  EXPECT_EQ(toString(PodPhase::Pending), "Pending");
  EXPECT_EQ(toString(PodPhase::Running), "Running");
  EXPECT_EQ(toString(PodPhase::Succeeded), "Succeeded");
  EXPECT_EQ(toString(PodPhase::Failed), "Failed");
  EXPECT_EQ(toString(PodPhase::Unknown), "Unknown");
  EXPECT_EQ(toString(QosClass::BestEffort), "BestEffort");
  EXPECT_EQ(toString(QosClass::Burstable), "Burstable");
  EXPECT_EQ(toString(QosClass::Guaranteed), "Guaranteed");
  EXPECT_EQ(toString(TaintEffect::None), "");
  EXPECT_EQ(toString(TaintEffect::NoSchedule), "NoSchedule");
  EXPECT_EQ(toString(TaintEffect::PreferNoSchedule), "PreferNoSchedule");
  EXPECT_EQ(toString(TaintEffect::NoExecute), "NoExecute");
}

TEST(PodTest, OwnersAndController) {
  Pod p;
  EXPECT_FALSE(p.hasOwnerKind("ReplicaSet"));
  EXPECT_EQ(p.controllerRef(), nullptr);
  p.owners.push_back({Symbol("v1"), Symbol("ConfigMap"), Symbol("cm"), "u1", false});
  p.owners.push_back({Symbol("apps/v1"), Symbol("ReplicaSet"), Symbol("web-1"), "u2", true});
  p.owners.push_back({Symbol("apps/v1"), Symbol("StatefulSet"), Symbol("db"), "u3", true});
  EXPECT_TRUE(p.hasOwnerKind("ReplicaSet"));
  EXPECT_TRUE(p.hasOwnerKind("ConfigMap"));
  EXPECT_FALSE(p.hasOwnerKind("DaemonSet"));
  ASSERT_NE(p.controllerRef(), nullptr);
  EXPECT_EQ(p.controllerRef()->name.view(), "web-1");  // the first controller wins
}

TEST(PodTest, KeyStateAndDefaults) {
  Pod p;
  p.ns = Symbol("prod");
  p.name = "web-1";
  EXPECT_EQ(p.key(), "prod/web-1");
  EXPECT_TRUE(p.constraints().tolerations.empty());  // a default-constructed pod has no block yet
  EXPECT_FALSE(p.isTerminating());
  p.deletionTimestamp = 5;
  EXPECT_TRUE(p.isTerminating());
  p.phase = PodPhase::Succeeded;
  EXPECT_TRUE(p.isTerminal());
  EXPECT_FALSE(p.isStatic());
  p.configSource = Symbol("api");
  EXPECT_FALSE(p.isStatic());
  p.configSource = Symbol("file");
  EXPECT_TRUE(p.isStatic());

  PodDisruptionBudget pdb;
  pdb.ns = Symbol("prod");
  pdb.name = "web";
  EXPECT_EQ(pdb.key(), "prod/web");
}

TEST(NodeTest, ReadyUnlessAReadyConditionSaysOtherwise) {
  Node n;
  EXPECT_TRUE(n.isReady());
  n.readyCondition = false;
  EXPECT_FALSE(n.isReady());
  n.readyCondition = true;
  EXPECT_TRUE(n.isReady());
}

SchedulingConstraints sampleConstraints(std::string zone) {
  SchedulingConstraints c;
  c.nodeSelector = {{"disk", "ssd"}};
  NodeAffinity na;
  na.required = NodeSelector{{NodeSelectorTerm{{{"zone", NodeSelectorOp::In, {std::move(zone)}}}, {}}}};
  c.nodeAffinity = na;
  c.tolerations = {{"node.kubernetes.io/not-ready", TolerationOp::Exists, "", TaintEffect::NoExecute, 300}};
  return c;
}

TEST(InternConstraintsTest, EqualBlocksShareOneAllocation) {
  auto a = internConstraints(sampleConstraints("a"));
  auto b = internConstraints(sampleConstraints("a"));
  auto other = internConstraints(sampleConstraints("b"));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), other.get());
  EXPECT_EQ(*a, sampleConstraints("a"));
  EXPECT_EQ(hashConstraints(sampleConstraints("a")), hashConstraints(*a));
  EXPECT_EQ(internConstraints({}).get(), internConstraints({}).get());
}

TEST(InternConstraintsTest, DifferencesAnywhereKeepBlocksApart) {
  auto base = sampleConstraints("a");
  auto withSeconds = base;
  withSeconds.tolerations[0].tolerationSeconds = 60;
  auto withSpread = base;
  withSpread.topologySpreadConstraints.push_back({});
  auto withAnti = base;
  withAnti.podAntiAffinity = PodAffinity{};
  std::set<const SchedulingConstraints*> distinct;
  for (const auto& c : {base, withSeconds, withSpread, withAnti}) distinct.insert(internConstraints(c).get());
  EXPECT_EQ(distinct.size(), 4u);
}

TEST(InternConstraintsTest, FreedBlocksAreNotResurrected) {
  auto zone = [](int i) { return "freed-" + std::to_string(i); };
  for (int i = 0; i < 3000; ++i) internConstraints(sampleConstraints(zone(i)));  // dropped at once
  auto kept = internConstraints(sampleConstraints(zone(7)));
  EXPECT_EQ(kept->nodeAffinity->required->terms[0].matchExpressions[0].values[0], zone(7));
  EXPECT_EQ(kept.get(), internConstraints(sampleConstraints(zone(7))).get());
}

TEST(InternConstraintsTest, ConcurrentInternersAgree) {
  constexpr int kThreads = 4;
  std::vector<const SchedulingConstraints*> seen(kThreads);
  std::vector<std::shared_ptr<const SchedulingConstraints>> keep(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen, &keep] {
      for (int i = 0; i < 200; ++i) keep[t] = internConstraints(sampleConstraints("concurrent"));
      seen[t] = keep[t].get();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
}

TEST(PodName, IsFoundByAPodsNamespaceAndNameWithoutACopy) {
  Pod web;
  web.ns = Symbol("shop");
  web.name = "web-0";
  PodNames names{PodName::of(web)};
  EXPECT_EQ(names.count(PodNameRef{web.ns, web.name}), 1u);
  EXPECT_EQ(PodName::of(web).key(), "shop/web-0");
  web.name = "web-1";
  EXPECT_EQ(names.count(PodNameRef{web.ns, web.name}), 0u);
  EXPECT_EQ(names.count(PodNameRef{Symbol("other"), "web-0"}), 0u) << "the namespace is part of the identity";
}

TEST(PodName, OrdersByNamespaceThenName) {
  const std::set<PodName> ordered{{Symbol("b"), "a"}, {Symbol("a"), "z"}, {Symbol("a"), "b"}};
  std::vector<std::string> keys;
  for (const PodName& p : ordered) keys.push_back(p.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"a/b", "a/z", "b/a"}));
}

}  // namespace
}  // namespace kdesched::api
