#include "pkg/cluster/store.h"

#include <unordered_set>

namespace kdesched::cluster {

std::string objectKey(const api::Pod& p) { return p.ns.str() + "/" + p.name; }
std::string objectKey(const api::Node& n) { return n.name; }
std::string objectKey(const api::PodDisruptionBudget& p) { return p.ns.str() + "/" + p.name; }
std::string objectKey(const api::Namespace& n) { return n.name; }
std::string objectKey(const api::PriorityClass& p) { return p.name; }
std::string objectKey(const api::PersistentVolumeClaim& p) { return p.ns.str() + "/" + p.name; }

template <typename T>
void Store::upsertInto(Table<T>& table, std::shared_ptr<const T> obj, std::string key) {
  std::vector<StoreEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, inserted] = table.try_emplace(std::move(key), obj);
    if (inserted) {
      events.push_back(Change<T>{EventType::Added, nullptr, obj});
    } else {
      events.push_back(Change<T>{EventType::Modified, it->second, obj});
      it->second = obj;
    }
    cached_.reset();
  }
  notify(events);
}

void Store::upsert(PodPtr p) {
  auto k = objectKey(*p);
  upsertInto(pods_, std::move(p), std::move(k));
}
void Store::upsert(NodePtr n) {
  auto k = objectKey(*n);
  upsertInto(nodes_, std::move(n), std::move(k));
}
void Store::upsert(PdbPtr p) {
  auto k = objectKey(*p);
  upsertInto(pdbs_, std::move(p), std::move(k));
}
void Store::upsert(NamespacePtr n) {
  auto k = objectKey(*n);
  upsertInto(namespaces_, std::move(n), std::move(k));
}
void Store::upsert(PriorityClassPtr p) {
  auto k = objectKey(*p);
  upsertInto(priorityClasses_, std::move(p), std::move(k));
}
void Store::upsert(PvcPtr p) {
  auto k = objectKey(*p);
  upsertInto(pvcs_, std::move(p), std::move(k));
}

void Store::upsert(api::Object object) {
  std::visit(
      [this](auto&& o) {
        using T = std::decay_t<decltype(o)>;
        upsert(std::make_shared<const T>(std::move(o)));
      },
      std::move(object));
}

bool Store::remove(api::Kind kind, const std::string& key) {
  std::vector<StoreEvent> events;
  auto erase = [&](auto& table) {
    using T = std::remove_const_t<typename std::decay_t<decltype(table)>::mapped_type::element_type>;
    auto it = table.find(key);
    if (it == table.end()) return false;
    events.push_back(Change<T>{EventType::Deleted, it->second, nullptr});
    table.erase(it);
    return true;
  };
  bool removed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    switch (kind) {
      case api::Kind::Pod: removed = erase(pods_); break;
      case api::Kind::Node: removed = erase(nodes_); break;
      case api::Kind::PodDisruptionBudget: removed = erase(pdbs_); break;
      case api::Kind::Namespace: removed = erase(namespaces_); break;
      case api::Kind::PriorityClass: removed = erase(priorityClasses_); break;
      case api::Kind::PersistentVolumeClaim: removed = erase(pvcs_); break;
      case api::Kind::Unknown: break;
    }
    if (removed) cached_.reset();
  }
  notify(events);
  return removed;
}

template <typename T>
std::size_t Store::replaceTable(Table<T>& table, std::vector<std::shared_ptr<const T>> objs) {
  std::vector<StoreEvent> events;
  std::size_t deletes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Table<T> fresh;
    fresh.reserve(objs.size());
    for (auto& o : objs) {
      std::string key = objectKey(*o);
      auto old = table.find(key);
      if (old == table.end()) {
        events.push_back(Change<T>{EventType::Added, nullptr, o});
      } else {
        events.push_back(Change<T>{EventType::Modified, old->second, o});
        table.erase(old);
      }
      fresh.insert_or_assign(std::move(key), std::move(o));
    }
    // Whatever is left vanished while we were not watching: deliver it as a delete.
    for (auto& [key, obj] : table) {
      events.push_back(Change<T>{EventType::Deleted, obj, nullptr});
      ++deletes;
    }
    table = std::move(fresh);
    cached_.reset();
  }
  notify(events);
  return deletes;
}

std::size_t Store::replace(api::Kind kind, std::vector<api::Object> objects) {
  auto collect = [&](auto& table) {
    using T = std::remove_const_t<typename std::decay_t<decltype(table)>::mapped_type::element_type>;
    std::vector<std::shared_ptr<const T>> typed;
    typed.reserve(objects.size());
    for (auto& o : objects) {
      if (auto* p = std::get_if<T>(&o)) typed.push_back(std::make_shared<const T>(std::move(*p)));
    }
    return replaceTable(table, std::move(typed));
  };
  switch (kind) {
    case api::Kind::Pod: return collect(pods_);
    case api::Kind::Node: return collect(nodes_);
    case api::Kind::PodDisruptionBudget: return collect(pdbs_);
    case api::Kind::Namespace: return collect(namespaces_);
    case api::Kind::PriorityClass: return collect(priorityClasses_);
    case api::Kind::PersistentVolumeClaim: return collect(pvcs_);
    case api::Kind::Unknown: break;
  }
  return 0;
}

SnapshotPtr Store::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_) return cached_;
  Objects o;
  auto fill = [](const auto& table, auto& out) {
    out.reserve(table.size());
    for (const auto& [k, v] : table) out.push_back(v);
  };
  fill(pods_, o.pods);
  fill(nodes_, o.nodes);
  fill(pdbs_, o.pdbs);
  fill(namespaces_, o.namespaces);
  fill(priorityClasses_, o.priorityClasses);
  fill(pvcs_, o.pvcs);
  cached_ = std::make_shared<const Snapshot>(std::move(o));
  return cached_;
}

std::size_t Store::count(api::Kind kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  switch (kind) {
    case api::Kind::Pod: return pods_.size();
    case api::Kind::Node: return nodes_.size();
    case api::Kind::PodDisruptionBudget: return pdbs_.size();
    case api::Kind::Namespace: return namespaces_.size();
    case api::Kind::PriorityClass: return priorityClasses_.size();
    case api::Kind::PersistentVolumeClaim: return pvcs_.size();
    case api::Kind::Unknown: break;
  }
  return 0;
}

bool Store::hasNode(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return nodes_.count(name) != 0;
}

void Store::subscribe(Listener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.push_back(std::move(listener));
}

void Store::notify(const std::vector<StoreEvent>& events) {
  if (events.empty()) return;
  std::vector<Listener> listeners;
  {
    std::lock_guard<std::mutex> lock(mu_);
    listeners = listeners_;
  }
  for (const auto& l : listeners)
    for (const auto& e : events) l(e);
}

}  // namespace kdesched::cluster
