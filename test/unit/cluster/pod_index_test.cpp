// The store's incremental pod indexes against the indexes built from scratch, over random
// changes with snapshots taken in between; and every snapshot still reads what it saw once the
// store has moved on (under ASan, a freed pod would be a use-after-free here).
#include "pkg/cluster/pod_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "pkg/cluster/store.h"
#include "test/unit/testing/builders.h"

namespace kdesched::cluster {
namespace {

using testing::PodBuilder;

// Each index as name lists: "key -> ns/name ns/name ...", every key that has pods.
using Listing = std::map<std::string, std::vector<std::string>>;

std::string id(const api::Pod* p) { return p->ns.str() + "/" + p->name + "@" + p->uid.str(); }

void note(Listing& out, const std::string& key, PodSpan pods) {
  auto& names = out[key];
  for (const api::Pod* p : pods) names.push_back(id(p));
}

Listing listing(const PodIndexes::Views& v) {
  Listing out;
  v.byNode.forEach([&](const api::Symbol& k, PodSpan s) { note(out, "node " + k.str(), s); });
  v.byNamespace.forEach([&](const api::Symbol& k, PodSpan s) { note(out, "ns " + k.str(), s); });
  v.byLabel.forEach(
      [&](const api::Labels::Item& kv, PodSpan s) { note(out, "label " + kv.first.str() + "=" + kv.second.str(), s); });
  v.byOwner.forEach([&](const std::string& k, PodSpan s) { note(out, "owner " + k, s); });
  v.antiAffinityByNamespace.forEach([&](const api::Symbol& k, PodSpan s) { note(out, "carriers " + k.str(), s); });
  return out;
}

// The indexes as a snapshot built them before they were kept incrementally.
Listing fromScratch(std::vector<const api::Pod*> pods, bool labelKeys = false) {
  std::sort(pods.begin(), pods.end(), podOrder);
  Listing out;
  for (const api::Pod* p : pods) {
    if (!p->nodeName.empty()) out["node " + p->nodeName.str()].push_back(id(p));
    out["ns " + p->ns.str()].push_back(id(p));
    for (const auto& [k, v] : p->labels) {
      out["label " + k.str() + "=" + v.str()].push_back(id(p));
      if (labelKeys) out["key " + k.str()].push_back(id(p));
    }
    for (const auto& o : p->owners) out["owner " + o.uid].push_back(id(p));
    if (p->constraints().hasRequiredAntiAffinity()) out["carriers " + p->ns.str()].push_back(id(p));
  }
  return out;
}

class RandomPods {
 public:
  // names: pod names per namespace; above ~200, some buckets pass 64 pods (binary search).
  explicit RandomPods(unsigned seed, std::size_t names = 30) : rng_(seed), names_(names) {}
  std::shared_ptr<const api::Pod> next() {
    const std::string name = "p" + std::to_string(pick(names_));
    PodBuilder b(name, std::vector<std::string>{"a", "b", "kube-system"}[pick(3)]);
    if (pick(5) > 0) b.node("n" + std::to_string(pick(4)));
    if (pick(2)) b.label("app", "v" + std::to_string(pick(3)));
    if (pick(3)) b.label("tier", "t" + std::to_string(pick(2)));
    if (pick(4) == 0) b.label("churn", std::to_string(++version_));  // a value never seen before
    if (pick(4) == 0) b.bare();
    if (pick(6) == 0) b.ownerUid("ReplicaSet", "rs", "shared-owner");
    if (pick(3) == 0) b.antiAffinity("app", "v0");  // a pod may gain or lose it between versions
    b.uid("u" + std::to_string(++version_));        // tells versions of one pod apart
    return b.build();
  }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

 private:
  std::mt19937 rng_;
  std::size_t names_;
  int version_ = 0;
};

std::vector<const api::Pod*> podsOf(const Snapshot& s) { return {s.pods().begin(), s.pods().end()}; }

// What a snapshot offers, read through its public lookups.
Listing lookups(const Snapshot& s) {
  Listing out;
  std::set<std::string> nodes, namespaces, uids;
  std::set<std::pair<std::string, std::string>> labels;
  for (const api::Pod* p : s.pods()) {
    if (!p->nodeName.empty()) nodes.insert(p->nodeName.str());
    namespaces.insert(p->ns.str());
    for (const auto& [k, v] : p->labels) labels.insert({k.str(), v.str()});
    for (const auto& o : p->owners) uids.insert(o.uid);
  }
  for (const auto& n : nodes) note(out, "node " + n, s.podsOnNode(api::Symbol(n)));
  for (const auto& ns : namespaces) note(out, "ns " + ns, s.podsInNamespace(api::Symbol(ns)));
  for (const auto& [k, v] : labels) {
    note(out, "label " + k + "=" + v, s.podsWithLabel(api::Symbol(k), api::Symbol(v)));
    if (!out.count("key " + k)) note(out, "key " + k, s.podsWithLabelKey(api::Symbol(k)));
  }
  for (const auto& u : uids) note(out, "owner " + u, s.podsOfOwner(u));
  s.forEachAntiAffinityCarriers([&](PodSpan carriers) {
    if (!carriers.empty()) note(out, "carriers " + carriers.front()->ns.str(), carriers);
  });
  return out;
}

TEST(PodIndexes, KeptUpToDateTheyEqualIndexesBuiltFromScratch) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    RandomPods gen(seed);
    Store store;
    std::vector<std::pair<SnapshotPtr, Listing>> held;  // snapshots a slow cycle still reads
    for (int step = 0; step < 400; ++step) {
      const std::size_t what = gen.pick(10);
      if (what < 7) {
        store.upsert(gen.next());
      } else if (what < 9) {
        store.remove(api::Kind::Pod, objectKey(*gen.next()));
      } else if (gen.pick(8) == 0) {
        std::vector<api::Object> relist;
        for (int i = 0; i < 25; ++i) relist.emplace_back(*gen.next());
        store.replace(api::Kind::Pod, std::move(relist));
      }
      if (gen.pick(4) == 0) {
        SnapshotPtr s = store.snapshot();
        const Listing seen = lookups(*s);
        ASSERT_EQ(seen, fromScratch(podsOf(*s), true)) << "seed " << seed << " step " << step;
        ASSERT_EQ(s->podCount(), store.count(api::Kind::Pod));
        held.emplace_back(s, seen);
        if (held.size() > 3) held.erase(held.begin() + static_cast<long>(gen.pick(held.size())));
      }
      for (const auto& [s, seen] : held) ASSERT_EQ(lookups(*s), seen) << "a snapshot changed: seed " << seed;
    }
  }
}

void editsMatchABuild(RandomPods gen, int steps, std::size_t longestAtLeast) {
  std::map<std::string, std::shared_ptr<const api::Pod>> live;  // the pods the index holds, by key
  PodIndexes index;
  std::vector<PodIndexes::Views> views;  // shared shards: edits after this must copy them
  for (int step = 0; step < steps; ++step) {
    auto pod = gen.next();
    auto& slot = live[objectKey(*pod)];
    if (gen.pick(5) == 0 && slot) {
      index.remove(*slot);
      slot.reset();
    } else if (slot) {
      index.change(*slot, *pod);
      slot = pod;
    } else {
      index.add(*pod);
      slot = pod;
    }
    if (step % 97 == 0) views.push_back(index.views());
  }
  std::vector<std::shared_ptr<const api::Pod>> pods;
  std::vector<const api::Pod*> raw;
  for (const auto& [key, p] : live)
    if (p) {
      pods.push_back(p);
      raw.push_back(p.get());
    }
  const Listing edited = listing(index.views());
  EXPECT_EQ(edited, fromScratch(raw));
  PodIndexes built;
  built.build(pods);
  EXPECT_EQ(listing(built.views()), fromScratch(raw));
  std::size_t longest = 0;
  for (const auto& [key, names] : edited) longest = std::max(longest, names.size());
  EXPECT_GE(longest, longestAtLeast);
}

TEST(PodIndexes, EditsMatchABuildOfTheSamePods) { editsMatchABuild(RandomPods(7), 2000, 20); }

// Buckets past 64 pods find a pod by binary search on (namespace, name), not by a pointer scan.
TEST(PodIndexes, EditsOfLongBucketsMatchABuildOfTheSamePods) { editsMatchABuild(RandomPods(11, 400), 20000, 200); }

}  // namespace
}  // namespace kdesched::cluster
