// An immutable, indexed view of the cluster for one cycle. Plugins read only through these indexes.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"

namespace kdesched::cluster {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using PdbPtr = std::shared_ptr<const api::PodDisruptionBudget>;
using NamespacePtr = std::shared_ptr<const api::Namespace>;
using PriorityClassPtr = std::shared_ptr<const api::PriorityClass>;
using PvcPtr = std::shared_ptr<const api::PersistentVolumeClaim>;

// Everything a snapshot is built from. The store hands one of these over under its lock.
struct Objects {
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  std::vector<PdbPtr> pdbs;
  std::vector<NamespacePtr> namespaces;
  std::vector<PriorityClassPtr> priorityClasses;
  std::vector<PvcPtr> pvcs;
};

class Snapshot {
 public:
  using Pods = std::span<const api::Pod* const>;

  explicit Snapshot(Objects objects);

  // Nodes sorted by name; pods sorted by namespace/name. Deterministic order makes plan output
  // reproducible and ties between equal candidates stable.
  const std::vector<const api::Node*>& nodes() const { return nodes_; }
  const std::vector<const api::Pod*>& pods() const { return pods_; }
  const std::vector<const api::PodDisruptionBudget*>& pdbs() const { return pdbs_; }

  const api::Node* node(std::string_view name) const;
  const api::Node* node(const api::Symbol& name) const;
  // Pods bound to a node, in pods() order, every phase.
  Pods podsOnNode(const api::Symbol& node) const;
  Pods podsInNamespace(const api::Symbol& ns) const;
  // Pods whose ownerReferences include this UID (any phase, bound or not).
  Pods podsOfOwner(std::string_view ownerUid) const;
  std::span<const api::PodDisruptionBudget* const> pdbsInNamespace(const api::Symbol& ns) const;
  const api::Namespace* namespaceByName(std::string_view name) const;
  const api::PriorityClass* priorityClass(std::string_view name) const;
  const api::PersistentVolumeClaim* pvc(const api::Symbol& ns, std::string_view name) const;
  // Pods whose label set contains this key (for selector-driven lookups).
  Pods podsWithLabelKey(const api::Symbol& key) const;
  // Pods carrying exactly this label.
  Pods podsWithLabel(const api::Symbol& key, const api::Symbol& value) const;

  std::size_t podCount() const { return pods_.size(); }

 private:
  Objects objects_;  // owns everything the raw pointers below point at
  std::vector<const api::Node*> nodes_;
  std::vector<const api::Pod*> pods_;
  std::vector<const api::PodDisruptionBudget*> pdbs_;
  std::unordered_map<std::string_view, const api::Node*> nodeByName_;
  std::unordered_map<api::Symbol, const api::Node*> nodeBySym_;
  std::unordered_map<api::Symbol, std::vector<const api::Pod*>> podsByNode_;
  std::unordered_map<api::Symbol, std::vector<const api::Pod*>> podsByNamespace_;
  std::unordered_map<api::Symbol, std::vector<const api::Pod*>> podsByLabelKey_;
  struct LabelHash {
    std::size_t operator()(const api::Labels::Item& kv) const noexcept {
      return kv.first.hash() * 31 + kv.second.hash();
    }
  };
  std::unordered_map<api::Labels::Item, std::vector<const api::Pod*>, LabelHash> podsByLabel_;
  std::unordered_map<std::string_view, std::vector<const api::Pod*>> podsByOwner_;
  std::unordered_map<api::Symbol, std::vector<const api::PodDisruptionBudget*>> pdbsByNamespace_;
  std::unordered_map<std::string_view, const api::Namespace*> namespaces_;
  std::unordered_map<std::string_view, const api::PriorityClass*> priorityClasses_;
  std::unordered_map<std::string, const api::PersistentVolumeClaim*> pvcs_;  // "ns/name"
};

using SnapshotPtr = std::shared_ptr<const Snapshot>;

}  // namespace kdesched::cluster
