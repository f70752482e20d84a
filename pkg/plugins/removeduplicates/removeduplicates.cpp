#include "pkg/plugins/removeduplicates/removeduplicates.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pkg/api/scheduling.h"
#include "pkg/base/log.h"
#include "pkg/plugins/common/pod_list_filter.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::removeduplicates {
namespace {

// Upstream's podOwner: one owner reference of a pod plus the pod's sorted images.
struct OwnerKey {
  std::string ns, kind, name;
  std::vector<std::string> images;  // sorted
  auto operator<=>(const OwnerKey&) const = default;
};

struct Group {
  std::int64_t occurrences = 0;  // the owner's pods with these images on every node, first ones included
  // Per node (by name), the pods after the first of their kind on that node, in listing order.
  std::map<std::string, std::vector<const api::Pod*>> duplicates;
};

bool excludedOwner(const Args& a, const api::Pod& pod) {
  return std::any_of(pod.owners.begin(), pod.owners.end(), [&](const api::OwnerReference& o) {
    return std::find(a.excludeOwnerKinds.begin(), a.excludeOwnerKinds.end(), o.kind.view()) !=
           a.excludeOwnerKinds.end();
  });
}

std::vector<std::string> sortedImages(const api::Pod& pod) {
  std::vector<std::string> out;
  for (const api::Symbol& i : pod.containerImages()) out.push_back(i.str());
  std::sort(out.begin(), out.end());
  return out;
}

// Upstream's podContainerKeys: namespace/kind/name/image for every owner and image, sorted. Two
// pods on a node are duplicates when these lists are equal.
std::vector<std::string> containerKeys(const api::Pod& pod, const std::vector<std::string>& images) {
  std::vector<std::string> keys;
  for (const api::OwnerReference& o : pod.owners)
    for (const std::string& i : images)
      keys.push_back(pod.ns.str() + "/" + o.kind.str() + "/" + o.name.str() + "/" + i);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The nodes a pod's constraints let it run on (NoSchedule/NoExecute taints tolerated, nodeSelector
// and required node affinity matched), computed once per distinct set of those three parts in a
// cycle: they are interned, so workloads that differ only in other constraints (anti-affinity,
// spread) share one pass over the nodes instead of one each.
class TargetNodes {
 public:
  explicit TargetNodes(const std::vector<const api::Node*>& nodes) : nodes_(nodes) {}

  const std::vector<const api::Node*>& matching(const api::SchedulingConstraints& c) {
    auto it = byConstraints_.find(&c);
    if (it != byConstraints_.end()) return *it->second;
    api::SchedulingConstraints filter;
    filter.nodeSelector = c.nodeSelector;
    filter.nodeAffinity = c.nodeAffinity;
    filter.tolerations = c.tolerations;
    std::shared_ptr<const api::SchedulingConstraints> key = api::internConstraints(std::move(filter));
    auto [slot, added] = byFilter_.try_emplace(key.get());
    if (added) {
      slot->second.key = key;
      for (const api::Node* n : nodes_)
        if (api::toleratesNoScheduleNoExecute(key->tolerations, n->taints) &&
            api::podMatchesNodeSelectorAndAffinity(*key, *n))
          slot->second.nodes.push_back(n);
    }
    byConstraints_.emplace(&c, &slot->second.nodes);
    return slot->second.nodes;
  }

 private:
  struct Entry {
    std::shared_ptr<const api::SchedulingConstraints> key;  // keeps the interned block alive
    std::vector<const api::Node*> nodes;
  };
  const std::vector<const api::Node*>& nodes_;
  std::unordered_map<const api::SchedulingConstraints*, const std::vector<const api::Node*>*> byConstraints_;
  std::unordered_map<const api::SchedulingConstraints*, Entry> byFilter_;
};

// Upstream's getTargetNodes: the union, over the distinct constraints among the duplicates, of the
// nodes each lets them run on; a set matching a single node adds nothing. Cordoned nodes count, as
// upstream's.
std::size_t targetNodeCount(const Group& g, TargetNodes& targets) {
  std::vector<const std::vector<const api::Node*>*> sets;
  for (const auto& [node, pods] : g.duplicates)
    for (const api::Pod* pod : pods) {
      const std::vector<const api::Node*>* m = &targets.matching(pod->constraints());
      if (m->size() > 1 && std::find(sets.begin(), sets.end(), m) == sets.end()) sets.push_back(m);
    }
  if (sets.size() == 1) return sets.front()->size();
  std::unordered_set<const api::Node*> all;
  for (const auto* m : sets) all.insert(m->begin(), m->end());
  return all.size();
}

std::string describeOwner(const OwnerKey& k) {
  std::string out = k.kind + " " + k.ns + "/" + k.name + " with images [";
  for (std::size_t i = 0; i < k.images.size(); ++i) out += (i ? " " : "") + k.images[i];
  return out + "]";
}

struct NotADuplicate {  // skip
  const api::Node* node;
  std::string text() const {
    return "not a duplicate: the first pod of its owners with its images on node " + node->name;
  }
};

struct FewTargets {  // skip: fewer than two nodes could run the owner's duplicates
  const OwnerKey* owner;
  const std::string* node;
  std::size_t targets;
  std::string text() const {
    return "a duplicate of " + describeOwner(*owner) + " on " + *node + ", but only " + std::to_string(targets) +
           " node(s) could run it: fewer than 2";
  }
};

// Candidate: a node holds more of the owner's pods than the average over the nodes that could run
// them ("4 pods of ReplicaSet default/web with images [nginx] on node1, at most 2 per node (6 pods
// over 3 nodes)").
struct Spread {
  const OwnerKey* owner;
  const std::string* node;
  std::size_t onNode;
  std::size_t upperAvg;
  std::int64_t occurrences;
  std::size_t targets;
  std::string text() const {
    return std::to_string(onNode) + " pods of " + describeOwner(*owner) + " on " + *node + ", at most " +
           std::to_string(upperAvg) + " per node (" + std::to_string(occurrences) + " pods over " +
           std::to_string(targets) + " nodes)";
  }
};

struct WithinAverage {  // skip: a duplicate the node keeps
  Spread spread;
  std::string text() const { return "within the average: " + spread.text(); }
};

// One node's pass of upstream's loop: the owners' pods that pass the filters, grouped. `listed`
// holds the plugin's namespaces (upstream's duplicates have no labelSelector).
void collect(framework::Handle& h, const Args& a, const PodListFilter& listed, const api::Node& node,
             std::map<OwnerKey, Group>& groups) {
  std::set<std::vector<std::string>> seen;
  for (const api::Pod* pod : h.podsOnNode(node)) {
    if (pod->owners.empty()) {
      h.skip(*pod, "not a candidate: the pod has no owner");
      continue;
    }
    if (excludedOwner(a, *pod)) {
      h.skip(*pod, "excluded: an owner's kind is in excludeOwnerKinds");
      continue;
    }
    // A pod without containers is invalid in Kubernetes; upstream would index an empty key list.
    if (pod->containerImages().empty()) continue;
    if (!listed.admits(h, *pod)) continue;
    if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
    std::vector<std::string> images = sortedImages(*pod);
    bool duplicate = !seen.insert(containerKeys(*pod, images)).second;
    if (!duplicate) h.skip(*pod, NotADuplicate{&node});
    // A pod with several owner references counts, and is a duplicate, once per owner (upstream).
    for (const api::OwnerReference& o : pod->owners) {
      Group& g = groups[OwnerKey{pod->ns.str(), o.kind.str(), o.name.str(), images}];
      ++g.occurrences;
      if (duplicate) g.duplicates[node.name].push_back(pod);
    }
  }
}

}  // namespace

Status RemoveDuplicates::balance(framework::Handle& h) {
  const PodListFilter listed{args_.namespaces, std::nullopt};
  std::map<OwnerKey, Group> groups;
  for (const api::Node* node : h.nodes()) collect(h, args_, listed, *node, groups);
  TargetNodes targetNodes(h.nodes());
  // Upstream walks owners and nodes in Go map order; kdesched by owner key, then node name.
  for (const auto& [owner, g] : groups) {
    if (g.duplicates.empty()) continue;
    const std::size_t targets = targetNodeCount(g, targetNodes);
    if (targets < 2) {
      for (const auto& [node, pods] : g.duplicates) h.skipEach(pods, FewTargets{&owner, &node, targets});
      log::debug("fewer than two nodes the duplicates could run on, none evicted",
                 {{"owner", describeOwner(owner)}, {"nodes", static_cast<std::int64_t>(targets)}});
      continue;
    }
    // A node keeps its first pod and the duplicates up to the average; the rest go.
    const auto upperAvg = static_cast<std::size_t>((g.occurrences + targets - 1) / targets);
    auto spreadOn = [&](const std::string& node, std::size_t pods) {
      return Spread{&owner, &node, pods + 1, upperAvg, g.occurrences, targets};
    };
    for (const auto& [node, pods] : g.duplicates) {
      const std::size_t kept = std::min(pods.size(), upperAvg - 1);
      h.skipEach(std::span(pods).first(kept), WithinAverage{spreadOn(node, pods.size())});
    }
    for (const auto& [node, pods] : g.duplicates) {
      if (pods.size() + 1 <= upperAvg) continue;
      const Spread over = spreadOn(node, pods.size());
      for (std::size_t i = upperAvg - 1; i < pods.size(); ++i) {
        // A pod of two owners may already have gone as the other owner's duplicate: the evictor
        // refuses it again quietly, as upstream's would find it gone.
        framework::EvictResult res = h.evict(*pods[i], over);
        if (res.refusal == framework::Refusal::NodeLimit) break;
        if (res.stopsPlugin()) return Status::ok();
      }
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() { return common::registrationOf<RemoveDuplicates>(kName, decodeArgs); }

}  // namespace kdesched::plugins::removeduplicates
