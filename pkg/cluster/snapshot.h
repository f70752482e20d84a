// An immutable, indexed view of the cluster for one cycle. Plugins read only through these indexes.
// Taking one costs microseconds: the pods part shares the store's indexes (pod_index.h), the
// rest is rebuilt only after one of those objects changed.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cluster/pod_index.h"

namespace kdesched::cluster {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using PdbPtr = std::shared_ptr<const api::PodDisruptionBudget>;
using NamespacePtr = std::shared_ptr<const api::Namespace>;
using PriorityClassPtr = std::shared_ptr<const api::PriorityClass>;
using PvcPtr = std::shared_ptr<const api::PersistentVolumeClaim>;

// The kinds other than pods: a few hundred objects at most, so the store builds this part whole
// again after one of them changed, and snapshots taken in between share it.
struct Objects {
  std::vector<NodePtr> nodes;
  std::vector<PdbPtr> pdbs;
  std::vector<NamespacePtr> namespaces;
  std::vector<PriorityClassPtr> priorityClasses;
  std::vector<PvcPtr> pvcs;
};
class Catalog {
 public:
  explicit Catalog(Objects objects);

 private:
  friend class Snapshot;
  Objects objects_;  // owns everything the raw pointers below point at
  std::vector<const api::Node*> nodes_;
  std::vector<const api::PodDisruptionBudget*> pdbs_;
  std::unordered_map<std::string_view, const api::Node*> nodeByName_;
  std::unordered_map<api::Symbol, const api::Node*> nodeBySym_;
  std::unordered_map<api::Symbol, std::vector<const api::PodDisruptionBudget*>> pdbsByNamespace_;
  std::unordered_map<std::string_view, const api::Namespace*> namespaces_;
  std::unordered_map<std::string_view, const api::PriorityClass*> priorityClasses_;
  std::unordered_map<std::string, const api::PersistentVolumeClaim*> pvcs_;  // "ns/name"
};

// The pods a snapshot sees: the store's indexes as they were (pod_index.h), and what keeps the
// pods they point at alive.
struct PodState {
  PodIndexes::Views index;
  std::shared_ptr<const void> keepAlive;
  std::size_t count = 0;
};

class Snapshot {
 public:
  using Pods = PodSpan;

  Snapshot(PodState pods, std::shared_ptr<const Catalog> catalog);

  // Nodes sorted by name; pods sorted by namespace/name. Deterministic order makes plan output
  // reproducible and ties between equal candidates stable.
  const std::vector<const api::Node*>& nodes() const { return catalog_->nodes_; }
  // Every pod, built on first use from the namespaces' lists (a pointer copy per pod).
  const std::vector<const api::Pod*>& pods() const;
  const std::vector<const api::PodDisruptionBudget*>& pdbs() const { return catalog_->pdbs_; }

  const api::Node* node(std::string_view name) const;
  const api::Node* node(const api::Symbol& name) const;
  // Pods bound to a node, in pods() order, every phase.
  Pods podsOnNode(const api::Symbol& node) const { return pods_.index.byNode.find(node); }
  Pods podsInNamespace(const api::Symbol& ns) const { return pods_.index.byNamespace.find(ns); }
  // Pods whose ownerReferences include this UID (any phase, bound or not).
  Pods podsOfOwner(std::string_view ownerUid) const { return pods_.index.byOwner.find(ownerUid); }
  std::span<const api::PodDisruptionBudget* const> pdbsInNamespace(const api::Symbol& ns) const;
  const api::Namespace* namespaceByName(std::string_view name) const;
  const api::PriorityClass* priorityClass(std::string_view name) const;
  const api::PersistentVolumeClaim* pvc(const api::Symbol& ns, std::string_view name) const;
  // Pods whose label set contains this key (for selector terms Exists, Gt, Lt): built from pods()
  // on first use of each key, in pods() order.
  Pods podsWithLabelKey(const api::Symbol& key) const;
  // Calls f(span) with the pods of each namespace that carries required anti-affinity terms
  // (every phase, bound or not; namespaces in no particular order, each span in pods() order).
  template <typename F>
  void forEachAntiAffinityCarriers(F&& f) const {
    pods_.index.antiAffinityByNamespace.forEach([&f](const api::Symbol&, Pods pods) { f(pods); });
  }
  // Pods carrying exactly this label.
  Pods podsWithLabel(const api::Symbol& key, const api::Symbol& value) const {
    return pods_.index.byLabel.find(api::Labels::Item{key, value});
  }

  std::size_t podCount() const { return pods_.count; }

 private:
  PodState pods_;
  std::shared_ptr<const Catalog> catalog_;
  mutable std::once_flag podsOnce_;
  mutable std::vector<const api::Pod*> allPods_;
  mutable std::mutex labelKeysMu_;
  mutable std::unordered_map<api::Symbol, std::vector<const api::Pod*>> podsByLabelKey_;
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

}  // namespace kdesched::cluster
