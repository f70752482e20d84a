#include "pkg/cluster/snapshot.h"

#include <algorithm>

namespace kdesched::cluster {

Catalog::Catalog(Objects objects) : objects_(std::move(objects)) {
  nodes_.reserve(objects_.nodes.size());
  for (const auto& n : objects_.nodes) nodes_.push_back(n.get());
  std::sort(nodes_.begin(), nodes_.end(), [](auto* a, auto* b) { return a->name < b->name; });
  nodeByName_.reserve(nodes_.size());
  nodeBySym_.reserve(nodes_.size());
  for (const auto* n : nodes_) {
    nodeByName_.emplace(n->name, n);
    nodeBySym_.emplace(n->nameSym, n);
  }

  pdbs_.reserve(objects_.pdbs.size());
  for (const auto& p : objects_.pdbs) pdbs_.push_back(p.get());
  std::sort(pdbs_.begin(), pdbs_.end(), [](auto* a, auto* b) {
    if (a->ns != b->ns) return a->ns.view() < b->ns.view();
    return a->name < b->name;
  });
  for (const auto* p : pdbs_) pdbsByNamespace_[p->ns].push_back(p);

  for (const auto& n : objects_.namespaces) namespaces_.emplace(n->name, n.get());
  for (const auto& pc : objects_.priorityClasses) priorityClasses_.emplace(pc->name, pc.get());
  for (const auto& pvc : objects_.pvcs) pvcs_.emplace(pvc->ns.str() + "/" + pvc->name, pvc.get());
}

Snapshot::Snapshot(PodState pods, std::shared_ptr<const Catalog> catalog)
    : pods_(std::move(pods)), catalog_(std::move(catalog)) {}

// The namespaces' lists in namespace order are every pod in snapshot order.
const std::vector<const api::Pod*>& Snapshot::pods() const {
  std::call_once(podsOnce_, [this] {
    std::vector<std::pair<std::string_view, Pods>> lists;
    pods_.index.byNamespace.forEach([&](const api::Symbol& ns, Pods pods) { lists.emplace_back(ns.view(), pods); });
    std::sort(lists.begin(), lists.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    allPods_.reserve(pods_.count);
    for (const auto& [ns, pods] : lists) allPods_.insert(allPods_.end(), pods.begin(), pods.end());
  });
  return allPods_;
}

Snapshot::Pods Snapshot::podsWithLabelKey(const api::Symbol& key) const {
  const auto& all = pods();
  std::lock_guard<std::mutex> lock(labelKeysMu_);
  auto [it, added] = podsByLabelKey_.try_emplace(key);
  if (added)
    for (const api::Pod* p : all)
      for (const auto& kv : p->labels)
        if (kv.first == key) {
          it->second.push_back(p);
          break;
        }
  return {it->second.data(), it->second.size()};
}

const api::Node* Snapshot::node(std::string_view name) const {
  auto it = catalog_->nodeByName_.find(name);
  return it == catalog_->nodeByName_.end() ? nullptr : it->second;
}

const api::Node* Snapshot::node(const api::Symbol& name) const {
  auto it = catalog_->nodeBySym_.find(name);
  return it == catalog_->nodeBySym_.end() ? nullptr : it->second;
}

std::span<const api::PodDisruptionBudget* const> Snapshot::pdbsInNamespace(const api::Symbol& ns) const {
  auto it = catalog_->pdbsByNamespace_.find(ns);
  if (it == catalog_->pdbsByNamespace_.end()) return {};
  return {it->second.data(), it->second.size()};
}

const api::Namespace* Snapshot::namespaceByName(std::string_view name) const {
  auto it = catalog_->namespaces_.find(name);
  return it == catalog_->namespaces_.end() ? nullptr : it->second;
}

const api::PriorityClass* Snapshot::priorityClass(std::string_view name) const {
  auto it = catalog_->priorityClasses_.find(name);
  return it == catalog_->priorityClasses_.end() ? nullptr : it->second;
}

const api::PersistentVolumeClaim* Snapshot::pvc(const api::Symbol& ns, std::string_view name) const {
  std::string key = ns.str();
  key += '/';
  key += name;
  auto it = catalog_->pvcs_.find(key);
  return it == catalog_->pvcs_.end() ? nullptr : it->second;
}

}  // namespace kdesched::cluster
