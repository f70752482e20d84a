#include "pkg/cluster/store.h"

#include "pkg/cluster/loader.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

TEST(Store, UpsertRemoveAndEvents) {
  cluster::Store s;
  std::vector<std::string> seen;
  auto subscription = s.subscribe([&](const cluster::StoreEvent& e) {
    if (auto* c = std::get_if<cluster::Change<api::Pod>>(&e)) {
      const char* t = c->type == cluster::EventType::Added      ? "add"
                      : c->type == cluster::EventType::Modified ? "mod"
                                                                : "del";
      seen.push_back(std::string(t) + " " + (c->after ? c->after->name : c->before->name));
    }
  });
  s.upsert(PodBuilder("a").node("n1").build());
  s.upsert(PodBuilder("a").node("n2").build());
  EXPECT_EQ(s.count(api::Kind::Pod), 1u);
  EXPECT_TRUE(s.remove(api::Kind::Pod, "default/a"));
  EXPECT_FALSE(s.remove(api::Kind::Pod, "default/a"));
  EXPECT_EQ(seen, (std::vector<std::string>{"add a", "mod a", "del a"}));
}

// A listener is called while its subscription lives: not after reset() or its destruction, and a
// moved subscription keeps it (the moved-from one unsubscribes nothing).
TEST(Store, ASubscriptionUnsubscribesWhenItGoes) {
  cluster::Store s;
  int first = 0, second = 0;
  cluster::Store::Subscription a = s.subscribe([&](const cluster::StoreEvent&) { ++first; });
  {
    auto b = s.subscribe([&](const cluster::StoreEvent&) { ++second; });
    s.upsert(PodBuilder("a").build());
    EXPECT_EQ(first, 1);
    EXPECT_EQ(second, 1);
  }
  s.upsert(PodBuilder("b").build());
  EXPECT_EQ(first, 2);
  EXPECT_EQ(second, 1) << "b was destroyed";

  cluster::Store::Subscription moved = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): a moved-from subscription is empty
  a.reset();        // NOLINT(bugprone-use-after-move): and unsubscribes nothing
  s.upsert(PodBuilder("c").build());
  EXPECT_EQ(first, 3);
  moved.reset();
  s.upsert(PodBuilder("d").build());
  EXPECT_EQ(first, 3);
}

TEST(Store, ReplaceTurnsVanishedObjectsIntoDeletes) {
  cluster::Store s;
  s.upsert(PodBuilder("a").build());
  s.upsert(PodBuilder("b").build());
  std::vector<std::string> deleted;
  auto subscription = s.subscribe([&](const cluster::StoreEvent& e) {
    if (auto* c = std::get_if<cluster::Change<api::Pod>>(&e); c && c->type == cluster::EventType::Deleted)
      deleted.push_back(c->before->name);
  });
  std::vector<api::Object> fresh;
  fresh.emplace_back(*PodBuilder("b").build());
  fresh.emplace_back(*PodBuilder("c").build());
  EXPECT_EQ(s.replace(api::Kind::Pod, std::move(fresh)), 1u);
  EXPECT_EQ(deleted, std::vector<std::string>{"a"});
  EXPECT_EQ(s.count(api::Kind::Pod), 2u);
}

// Entries are keyed by views into the objects themselves: a new version must re-key its entry, so
// the old version is freed (not kept alive, not read through a dangling key) and lookups still work.
TEST(Store, KeysFollowTheCurrentVersion) {
  cluster::Store s;
  std::shared_ptr<const api::Pod> first = PodBuilder("a", "shop").node("n1").build();
  std::weak_ptr<const api::Pod> old = first;
  s.upsert(std::move(first));
  s.upsert(PodBuilder("a", "shop").node("n2").build());
  s.upsert(NodeBuilder("n1").build());
  EXPECT_TRUE(old.expired()) << "the store still holds the replaced version";
  EXPECT_EQ(s.count(api::Kind::Pod), 1u);
  ASSERT_EQ(s.snapshot()->pods().size(), 1u);
  EXPECT_EQ(s.snapshot()->pods()[0]->nodeName.view(), "n2");
  EXPECT_TRUE(s.hasNode("n1"));
  EXPECT_FALSE(s.hasNode("shop/a"));
  EXPECT_FALSE(s.remove(api::Kind::Pod, "a")) << "a namespaced key has a namespace";
  EXPECT_FALSE(s.remove(api::Kind::Pod, "default/a"));
  EXPECT_FALSE(s.remove(api::Kind::Node, "shop/a"));
  EXPECT_TRUE(s.remove(api::Kind::Pod, "shop/a"));
  EXPECT_TRUE(s.remove(api::Kind::Node, "n1"));
  EXPECT_EQ(s.count(api::Kind::Pod), 0u);
  EXPECT_EQ(s.count(api::Kind::Node), 0u);
}

// A relist naming one object twice keeps the later copy, as before.
TEST(Store, ReplaceKeepsTheLaterOfTwoCopies) {
  cluster::Store s;
  std::vector<api::Object> fresh;
  fresh.emplace_back(*PodBuilder("a").node("n1").build());
  fresh.emplace_back(*PodBuilder("a").node("n2").build());
  EXPECT_EQ(s.replace(api::Kind::Pod, std::move(fresh)), 0u);
  ASSERT_EQ(s.snapshot()->pods().size(), 1u);
  EXPECT_EQ(s.snapshot()->pods()[0]->nodeName.view(), "n2");
}

TEST(Store, SnapshotIsImmutableAndCached) {
  cluster::Store s;
  s.upsert(NodeBuilder("n1").build());
  s.upsert(PodBuilder("a").node("n1").build());
  auto s1 = s.snapshot();
  EXPECT_EQ(s1, s.snapshot());  // no change: the same snapshot is shared
  s.upsert(PodBuilder("b").node("n1").build());
  auto s2 = s.snapshot();
  EXPECT_NE(s1, s2);
  EXPECT_EQ(s1->podsOnNode(api::Symbol("n1")).size(), 1u);
  EXPECT_EQ(s2->podsOnNode(api::Symbol("n1")).size(), 2u);
}

TEST(Store, ASnapshotKeepsThePodsItSawAfterTheyLeaveAndAfterTheStoreIsGone) {
  cluster::SnapshotPtr snap;
  std::weak_ptr<const api::Pod> replaced;
  {
    cluster::Store s;
    auto a = PodBuilder("a").node("n1").build();
    replaced = a;
    s.upsert(std::move(a));
    s.upsert(PodBuilder("b").node("n1").build());
    snap = s.snapshot();
    s.upsert(PodBuilder("a").node("n2").build());  // a new version of a
    s.remove(api::Kind::Pod, "default/b");
    EXPECT_FALSE(replaced.expired()) << "the snapshot still points at the old a";
  }
  ASSERT_EQ(snap->pods().size(), 2u);
  EXPECT_EQ(snap->podsOnNode(api::Symbol("n1")).size(), 2u);
  EXPECT_EQ(snap->pods()[1]->name, "b");
  snap.reset();
  EXPECT_TRUE(replaced.expired()) << "freed with the last snapshot that saw it";
}

TEST(Store, APodLeavingWhileNoSnapshotHoldsItIsFreedAtOnce) {
  cluster::Store s;
  auto a = PodBuilder("a").build();
  std::weak_ptr<const api::Pod> first = a;
  s.upsert(std::move(a));
  (void)s.snapshot();  // taken and dropped: the indexes are kept from now on
  s.upsert(PodBuilder("a").node("n1").build());
  EXPECT_TRUE(first.expired());
}

TEST(Snapshot, Indexes) {
  ClusterBuilder b;
  b.add(NodeBuilder("n2").build()).add(NodeBuilder("n1").build());
  b.add(PodBuilder("x", "ns1").app("web").ownerUid("ReplicaSet", "rs", "u1").node("n1").build());
  b.add(PodBuilder("y", "ns1").app("db").ownerUid("ReplicaSet", "rs", "u1").node("n2").build());
  b.add(PodBuilder("z", "ns2").app("web").node("n2").build());
  b.add(PodBuilder("pending", "ns2").app("web").build());
  b.add(pdb("p", "ns1", selectorOf("app", "web"), 1));
  auto s = b.snapshot();
  ASSERT_EQ(s->nodes().size(), 2u);
  EXPECT_EQ(s->nodes()[0]->name, "n1");  // sorted
  EXPECT_EQ(s->podsOnNode(api::Symbol("n2")).size(), 2u);
  EXPECT_EQ(s->podsInNamespace(api::Symbol("ns2")).size(), 2u);
  EXPECT_EQ(s->podsOfOwner("u1").size(), 2u);
  EXPECT_EQ(s->podsWithLabel(api::Symbol("app"), api::Symbol("web")).size(), 3u);
  EXPECT_EQ(s->podsWithLabelKey(api::Symbol("app")).size(), 4u);
  EXPECT_EQ(s->pdbsInNamespace(api::Symbol("ns1")).size(), 1u);
  EXPECT_EQ(s->node("n1"), s->nodes()[0]);
  EXPECT_EQ(s->node("missing"), nullptr);
}

// A running pod's conditions (here Ready and Initialized) are what keepPodConditions(false) drops;
// ready stays; a pod whose status says more (a reason, a restarted container) keeps that part.
TEST(Store, PodConditionsAreDroppedWhenNoPluginReadsThem) {
  auto running = [](const char* name) {
    return *PodBuilder(name).condition("Initialized", "True").condition("Ready", "True").build();
  };
  cluster::Store keep;
  keep.upsert(api::Object(running("a")));
  ASSERT_EQ(keep.snapshot()->pods().size(), 1u);
  EXPECT_EQ(keep.snapshot()->pods()[0]->status().conditions.size(), 2u) << "kept by default";

  cluster::Store s;
  s.keepPodConditions(false);
  s.upsert(api::Object(running("a")));
  api::Pod failing = *PodBuilder("b").condition("Ready", "False").statusReason("Evicted").restarts(4).build();
  s.upsert(api::Object(failing));
  std::vector<api::Object> relisted;
  relisted.emplace_back(running("a"));
  relisted.emplace_back(running("c"));
  relisted.emplace_back(failing);
  EXPECT_EQ(s.replace(api::Kind::Pod, std::move(relisted)), 0u);
  cluster::SnapshotPtr snap = s.snapshot();
  auto find = [&](std::string_view name) -> const api::Pod* {
    for (const api::Pod* p : snap->pods())
      if (p->name == name) return p;
    return nullptr;
  };
  for (const char* name : {"a", "c"}) {
    const api::Pod* p = find(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_TRUE(p->ready) << name;
    EXPECT_EQ(p->statusDetail, nullptr) << name << ": nothing else in its status detail";
  }
  const api::Pod* b = find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->ready);
  EXPECT_TRUE(b->status().conditions.empty());
  EXPECT_EQ(b->status().reason.view(), "Evicted");
  ASSERT_EQ(b->status().containers.size(), 1u);
  EXPECT_EQ(b->status().containers[0].restartCount, 4);
}

// A pending pod's nominated node is not a condition: a store that drops conditions keeps it
// (MakeRoomForPendingPods leaves a nominated pod to preemption).
TEST(Store, DroppingConditionsKeepsTheNominatedNode) {
  cluster::Store s;
  s.keepPodConditions(false);
  s.upsert(api::Object(*PodBuilder("big").condition("PodScheduled", "False", "Unschedulable").nominated("n2").build()));
  const cluster::SnapshotPtr snap = s.snapshot();
  ASSERT_EQ(snap->pods().size(), 1u);
  EXPECT_TRUE(snap->pods()[0]->status().conditions.empty());
  EXPECT_EQ(snap->pods()[0]->status().nominatedNodeName.view(), "n2");
}

// The snapshot loader makes its shared objects itself: it drops conditions too.
TEST(Store, TheLoaderKeepsWhatTheStoreKeeps) {
  const std::string json = R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"a","namespace":"default"},)"
                           R"("spec":{"nodeName":"n1"},"status":{"phase":"Running","conditions":[)"
                           R"({"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}]})";
  for (bool keep : {true, false}) {
    cluster::Store s;
    s.keepPodConditions(keep);
    ASSERT_TRUE(cluster::loadSnapshot(json, "test.json", s).isOk());
    ASSERT_EQ(s.snapshot()->pods().size(), 1u);
    const api::Pod& p = *s.snapshot()->pods()[0];
    EXPECT_TRUE(p.ready);
    EXPECT_EQ(p.status().conditions.size(), keep ? 1u : 0u) << keep;
  }
}

// A daemon's store sees label values it never sees again (a counter, a rollout's pod-template-hash,
// a Job's controller-uid): once the pods carrying them are gone, so are the strings.
TEST(Store, LabelValuesOfDeletedPodsDoNotStayInterned) {
  cluster::Store s;
  auto churn = [&](const std::string& tag, int n) {
    for (int i = 0; i < n; ++i) {
      const std::string name = tag + std::to_string(i % 100);  // 100 pods alive at a time
      s.upsert(PodBuilder(name).label("bench-churn", tag + std::to_string(i)).build());
      (void)s.snapshot();  // a cycle between changes holds the objects for a while
      if (i % 100 == 99)
        for (int k = 0; k < 100; ++k) s.remove(api::Kind::Pod, "default/" + tag + std::to_string(k));
    }
  };
  churn("warm-", 20000);
  const std::size_t before = api::Symbol::tableSize();
  churn("churn-", 2 * static_cast<int>(before) + 20000);
  EXPECT_LE(api::Symbol::tableSize(), 2 * before + 4096);
}

}  // namespace
}  // namespace kdesched::testing
