#include "pkg/plugins/removeduplicates/removeduplicates.h"

#include <algorithm>
#include <map>
#include <set>
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

// One node's pass of upstream's loop: the owners' pods that pass the filters, grouped.
void collect(framework::Handle& h, const Args& a, const api::Node& node, std::map<OwnerKey, Group>& groups) {
  std::set<std::vector<std::string>> seen;
  for (const api::Pod* pod : h.podsOnNode(node)) {
    if (pod->owners.empty() || excludedOwner(a, *pod)) {
      h.passOver(*pod, pod->owners.empty() ? "not a candidate: the pod has no owner"
                                           : "excluded: an owner's kind is in excludeOwnerKinds");
      continue;
    }
    // A pod without containers is invalid in Kubernetes; upstream would index an empty key list.
    if (pod->containerImages().empty()) continue;
    if (a.namespaces && !a.namespaces->allows(pod->ns.view())) {
      if (h.explaining(*pod)) h.passOver(*pod, PodListFilter{a.namespaces, std::nullopt}.whyNot(*pod));
      continue;
    }
    if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
    std::vector<std::string> images = sortedImages(*pod);
    bool duplicate = !seen.insert(containerKeys(*pod, images)).second;
    if (!duplicate && h.explaining(*pod))
      h.passOver(*pod, "not a duplicate: the first pod of its owners with its images on node " + node.name);
    // A pod with several owner references counts, and is a duplicate, once per owner (upstream).
    for (const api::OwnerReference& o : pod->owners) {
      Group& g = groups[OwnerKey{pod->ns.str(), o.kind.str(), o.name.str(), images}];
      ++g.occurrences;
      if (duplicate) g.duplicates[node.name].push_back(pod);
    }
  }
}

// The duplicates the group keeps, for `plan --explain`: all when fewer than two nodes could take
// them, else those within the per-node average.
void explainGroup(const framework::Handle& h, const OwnerKey& owner, const Group& g, std::size_t targets) {
  const auto upperAvg = targets < 2 ? 0 : static_cast<std::size_t>((g.occurrences + targets - 1) / targets);
  for (const auto& [node, pods] : g.duplicates)
    for (std::size_t i = 0; i < pods.size(); ++i) {
      if (!h.explaining(*pods[i])) continue;
      if (targets < 2)
        h.passOver(*pods[i], "a duplicate of " + describeOwner(owner) + " on " + node + ", but only " +
                                 std::to_string(targets) + " node(s) could run it: fewer than 2");
      else if (i + 1 < upperAvg)
        h.passOver(*pods[i], "within the average: " + std::to_string(pods.size() + 1) + " pods of " +
                                 describeOwner(owner) + " on " + node + ", at most " + std::to_string(upperAvg) +
                                 " per node (" + std::to_string(g.occurrences) + " pods over " +
                                 std::to_string(targets) + " nodes)");
    }
}

}  // namespace

Status RemoveDuplicates::balance(framework::Handle& h) {
  std::map<OwnerKey, Group> groups;
  for (const api::Node* node : h.nodes()) collect(h, args_, *node, groups);
  TargetNodes targetNodes(h.nodes());
  // Upstream walks owners and nodes in Go map order; kdesched by owner key, then node name.
  for (const auto& [owner, g] : groups) {
    if (g.duplicates.empty()) continue;
    std::size_t targets = targetNodeCount(g, targetNodes);
    if (h.explainingAny()) explainGroup(h, owner, g, targets);
    if (targets < 2) {
      log::debug("fewer than two nodes the duplicates could run on, none evicted",
                 {{"owner", describeOwner(owner)}, {"nodes", static_cast<std::int64_t>(targets)}});
      continue;
    }
    auto upperAvg = static_cast<std::size_t>((g.occurrences + targets - 1) / targets);
    for (const auto& [node, pods] : g.duplicates) {
      if (pods.size() + 1 <= upperAvg) continue;
      std::string reason = std::to_string(pods.size() + 1) + " pods of " + describeOwner(owner) + " on " + node +
                           ", at most " + std::to_string(upperAvg) + " per node (" + std::to_string(g.occurrences) +
                           " pods over " + std::to_string(targets) + " nodes)";
      for (std::size_t i = upperAvg - 1; i < pods.size(); ++i) {
        // A pod of two owners may already have gone as the other owner's duplicate: the evictor
        // refuses it again quietly, as upstream's would find it gone.
        framework::EvictResult res = h.evict(*pods[i], reason);
        if (res.refusal == framework::Refusal::NodeLimit) break;
        if (res.stopsPlugin()) return Status::ok();
      }
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() { return common::registrationOf<RemoveDuplicates>(kName, decodeArgs); }

}  // namespace kdesched::plugins::removeduplicates
