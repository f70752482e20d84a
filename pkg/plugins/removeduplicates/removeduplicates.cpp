#include "pkg/plugins/removeduplicates/removeduplicates.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "pkg/api/scheduling.h"
#include "pkg/base/log.h"
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

// Upstream's getTargetNodes: for each distinct set of constraints among the duplicates, the nodes
// whose NoSchedule/NoExecute taints they tolerate and whose labels match their nodeSelector and
// required node affinity; a set matching a single node adds nothing. Cordoned nodes count, as
// upstream's.
std::size_t targetNodeCount(const Group& g, const std::vector<const api::Node*>& nodes) {
  std::vector<const api::SchedulingConstraints*> distinct;
  for (const auto& [node, pods] : g.duplicates) {
    for (const api::Pod* pod : pods) {
      const api::SchedulingConstraints& c = pod->constraints();
      if (std::none_of(distinct.begin(), distinct.end(),
                       [&](const api::SchedulingConstraints* d) { return d == &c || *d == c; }))
        distinct.push_back(&c);
    }
  }
  std::set<const api::Node*> targets;
  std::vector<const api::Node*> matching;
  for (const api::SchedulingConstraints* c : distinct) {
    matching.clear();
    for (const api::Node* n : nodes) {
      if (api::toleratesNoScheduleNoExecute(c->tolerations, n->taints) &&
          api::podMatchesNodeSelectorAndAffinity(*c, *n))
        matching.push_back(n);
    }
    if (matching.size() > 1) targets.insert(matching.begin(), matching.end());
  }
  return targets.size();
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
    if (pod->owners.empty() || excludedOwner(a, *pod)) continue;
    // A pod without containers is invalid in Kubernetes; upstream would index an empty key list.
    if (pod->containerImages().empty()) continue;
    if (a.namespaces && !a.namespaces->allows(pod->ns.view())) continue;
    if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
    std::vector<std::string> images = sortedImages(*pod);
    bool duplicate = !seen.insert(containerKeys(*pod, images)).second;
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
  std::map<OwnerKey, Group> groups;
  for (const api::Node* node : h.nodes()) collect(h, args_, *node, groups);
  // Upstream walks owners and nodes in Go map order; kdesched by owner key, then node name.
  for (const auto& [owner, g] : groups) {
    if (g.duplicates.empty()) continue;
    std::size_t targets = targetNodeCount(g, h.nodes());
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
        if (res.refusal == framework::Refusal::TotalLimit) return Status::ok();
      }
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() { return common::registrationOf<RemoveDuplicates>(kName, decodeArgs); }

}  // namespace kdesched::plugins::removeduplicates
