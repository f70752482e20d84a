#include "pkg/cluster/store.h"

#include <type_traits>
#include <unordered_set>
#include <utility>

namespace kdesched::cluster {

std::string objectKey(const api::Pod& p) { return p.ns.str() + "/" + p.name; }
std::string objectKey(const api::Node& n) { return n.name; }
std::string objectKey(const api::PodDisruptionBudget& p) { return p.ns.str() + "/" + p.name; }
std::string objectKey(const api::Namespace& n) { return n.name; }
std::string objectKey(const api::PriorityClass& p) { return p.name; }
std::string objectKey(const api::PersistentVolumeClaim& p) { return p.ns.str() + "/" + p.name; }

std::size_t Store::KeyHash::operator()(const KeyView& k) const {
  const std::size_t h = std::hash<std::string_view>()(k.ns);
  return h ^ (std::hash<std::string_view>()(k.name) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

struct Store::Epoch {
  std::vector<PodPtr> retired;
  std::shared_ptr<Epoch> next;
  // Frees a chain of epochs nobody else holds in a loop, not by recursion.
  ~Epoch() {
    std::shared_ptr<Epoch> n = std::move(next);
    while (n && n.use_count() == 1) n = std::move(n->next);
  }
};

Store::~Store() {
  cached_.reset();
  for (const auto& pod : pods_) retire(pod);
}

void Store::retire(PodPtr pod) {
  if (epoch_ && epoch_.use_count() > 1) epoch_->retired.push_back(std::move(pod));
}

void Store::podAdded(const PodPtr& pod) {
  if (indexed_) index_.add(*pod);
}

void Store::podChanged(const PodPtr& before, const PodPtr& after) {
  if (indexed_) index_.change(*before, *after);
  retire(before);
}

void Store::podRemoved(const PodPtr& pod) {
  if (indexed_) index_.remove(*pod);
  retire(pod);
}

template <typename T>
void Store::changed() {
  cached_.reset();
  if constexpr (!std::is_same_v<T, api::Pod>) catalog_.reset();
}

template <typename T>
void Store::upsertInto(Table<T>& table, std::shared_ptr<const T> obj) {
  std::vector<StoreEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = table.find(keyOf(*obj));
    changed<T>();
    if (it == table.end()) {
      if constexpr (std::is_same_v<T, api::Pod>) podAdded(obj);
      events.push_back(Change<T>{EventType::Added, nullptr, obj});
      table.insert(std::move(obj));
    } else {
      if constexpr (std::is_same_v<T, api::Pod>) podChanged(*it, obj);
      // The entry is the object, so a new version takes the old one's node (no allocation).
      events.push_back(Change<T>{EventType::Modified, *it, obj});
      auto node = table.extract(it);
      node.value() = std::move(obj);
      table.insert(std::move(node));
    }
  }
  notify(events);
}

void Store::upsert(PodPtr p) { upsertInto(pods_, std::move(p)); }
void Store::upsert(NodePtr n) { upsertInto(nodes_, std::move(n)); }
void Store::upsert(PdbPtr p) { upsertInto(pdbs_, std::move(p)); }
void Store::upsert(NamespacePtr n) { upsertInto(namespaces_, std::move(n)); }
void Store::upsert(PriorityClassPtr p) { upsertInto(priorityClasses_, std::move(p)); }
void Store::upsert(PvcPtr p) { upsertInto(pvcs_, std::move(p)); }

void Store::trim(api::Object& object) const {
  if (keepPodConditions_.load(std::memory_order_relaxed)) return;
  auto* pod = std::get_if<api::Pod>(&object);
  if (!pod || !pod->statusDetail || pod->statusDetail->conditions.empty()) return;
  const api::PodStatusDetail& d = *pod->statusDetail;
  if (d.reason.empty() && d.containers.empty() && d.nominatedNodeName.empty()) {
    pod->statusDetail.reset();  // the usual running pod: nothing else in its status detail
    return;
  }
  pod->statusDetail = std::make_shared<const api::PodStatusDetail>(
      api::PodStatusDetail{d.reason, d.containers, {}, d.nominatedNodeName});
}

void Store::upsert(api::Object object) {
  trim(object);
  std::visit(
      [this](auto&& o) {
        using T = std::decay_t<decltype(o)>;
        upsert(std::make_shared<const T>(std::move(o)));
      },
      std::move(object));
}

bool Store::remove(api::Kind kind, const std::string& key) {
  std::vector<StoreEvent> events;
  // "namespace/name" for namespaced kinds (objectKey), the name alone for the others.
  const bool namespaced =
      kind == api::Kind::Pod || kind == api::Kind::PodDisruptionBudget || kind == api::Kind::PersistentVolumeClaim;
  const std::size_t slash = key.find('/');
  if (namespaced && slash == std::string::npos) return false;
  const std::string_view k(key);
  const KeyView view = namespaced ? KeyView{k.substr(0, slash), k.substr(slash + 1)} : KeyView{{}, k};
  auto erase = [&](auto& table) {
    using T = std::remove_const_t<typename std::decay_t<decltype(table)>::value_type::element_type>;
    auto it = table.find(view);
    if (it == table.end()) return false;
    changed<T>();
    if constexpr (std::is_same_v<T, api::Pod>) podRemoved(*it);
    events.push_back(Change<T>{EventType::Deleted, *it, nullptr});
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
      auto old = table.find(keyOf(*o));
      if (old == table.end()) {
        events.push_back(Change<T>{EventType::Added, nullptr, o});
      } else {
        events.push_back(Change<T>{EventType::Modified, *old, o});
        table.erase(old);
      }
      // A list naming one object twice: the later copy wins, as with a map.
      auto [at, inserted] = fresh.insert(o);
      if (!inserted) {
        auto node = fresh.extract(at);
        node.value() = std::move(o);
        fresh.insert(std::move(node));
      }
    }
    // Whatever is left vanished while we were not watching: deliver it as a delete.
    for (const auto& obj : table) {
      events.push_back(Change<T>{EventType::Deleted, obj, nullptr});
      ++deletes;
    }
    table = std::move(fresh);
    changed<T>();
    if constexpr (std::is_same_v<T, api::Pod>) {
      // Every pod may have changed: the indexes are built again in one pass, not edited per pod.
      for (const auto& e : events) {
        const auto& c = std::get<Change<T>>(e);
        if (c.before) retire(c.before);
      }
      if (indexed_) index_.build(table);
    }
  }
  notify(events);
  return deletes;
}

std::size_t Store::replace(api::Kind kind, std::vector<api::Object> objects) {
  if (kind == api::Kind::Pod)
    for (api::Object& o : objects) trim(o);
  auto collect = [&](auto& table) {
    using T = std::remove_const_t<typename std::decay_t<decltype(table)>::value_type::element_type>;
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
  if (!indexed_) {
    index_.build(pods_);
    indexed_ = true;
  }
  if (!catalog_) {
    Objects o;
    auto fill = [](const auto& table, auto& out) {
      out.reserve(table.size());
      for (const auto& v : table) out.push_back(v);
    };
    fill(nodes_, o.nodes);
    fill(pdbs_, o.pdbs);
    fill(namespaces_, o.namespaces);
    fill(priorityClasses_, o.priorityClasses);
    fill(pvcs_, o.pvcs);
    catalog_ = std::make_shared<const Catalog>(std::move(o));
  }
  auto epoch = std::make_shared<Epoch>();
  if (epoch_) epoch_->next = epoch;
  epoch_ = epoch;
  cached_ = std::make_shared<const Snapshot>(PodState{index_.views(), std::move(epoch), pods_.size()}, catalog_);
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
  return nodes_.find(KeyView{{}, name}) != nodes_.end();
}

Store::Subscription Store::subscribe(Listener listener) {
  std::unique_lock<std::shared_mutex> lock(listenersMu_);
  const std::uint64_t id = nextListener_++;
  listeners_.emplace_back(id, std::move(listener));
  return Subscription(this, id);
}

void Store::unsubscribe(std::uint64_t id) {
  std::unique_lock<std::shared_mutex> lock(listenersMu_);
  std::erase_if(listeners_, [id](const auto& l) { return l.first == id; });
}

void Store::notify(const std::vector<StoreEvent>& events) {
  if (events.empty()) return;
  std::shared_lock<std::shared_mutex> lock(listenersMu_);
  for (const auto& l : listeners_)
    for (const auto& e : events) l.second(e);
}

Store::Subscription::Subscription(Subscription&& other) noexcept
    : store_(std::exchange(other.store_, nullptr)), id_(other.id_) {}

Store::Subscription& Store::Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    store_ = std::exchange(other.store_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

void Store::Subscription::reset() {
  if (store_) std::exchange(store_, nullptr)->unsubscribe(id_);
}

}  // namespace kdesched::cluster
