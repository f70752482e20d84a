// The thread-safe cache of cluster state: compact objects keyed like the API server keys them,
// change listeners for event triggers, and immutable snapshots for cycles.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pkg/api/object.h"
#include "pkg/cluster/snapshot.h"

namespace kdesched::cluster {

enum class EventType { Added, Modified, Deleted };

// A change to one object. For Deleted, `after` is null; for Added, `before` is null.
template <typename T>
struct Change {
  EventType type;
  std::shared_ptr<const T> before;
  std::shared_ptr<const T> after;
};

using StoreEvent = std::variant<Change<api::Pod>, Change<api::Node>, Change<api::PodDisruptionBudget>,
                                Change<api::Namespace>, Change<api::PriorityClass>, Change<api::PersistentVolumeClaim>>;

class Store {
 public:
  using Listener = std::function<void(const StoreEvent&)>;

  // What subscribe() returns: the listener stays subscribed while this lives. Destroying it (or
  // reset()) unsubscribes; once that returns the listener is not running and is never called
  // again, so a listener may capture what the subscription's owner owns. Move-only; must not
  // outlive the store, and a listener must not destroy its own subscription.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&& other) noexcept;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { reset(); }
    void reset();
    explicit operator bool() const { return store_ != nullptr; }

   private:
    friend class Store;
    Subscription(Store* store, std::uint64_t id) : store_(store), id_(id) {}
    Store* store_ = nullptr;
    std::uint64_t id_ = 0;
  };

  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  // Snapshots may outlive the store: they keep its pods.
  ~Store();

  // Insert or replace by key (namespace/name, or name for cluster-scoped kinds).
  void upsert(api::Object object);
  void upsert(PodPtr pod);
  void upsert(NodePtr node);
  void upsert(PdbPtr pdb);
  void upsert(NamespacePtr ns);
  void upsert(PriorityClassPtr pc);
  void upsert(PvcPtr pvc);
  // Removes by key; returns false when the object was not cached.
  bool remove(api::Kind kind, const std::string& key);
  // Replaces every object of `kind` (a relist): objects missing from `objects` become deletes,
  // changed ones modifications. Returns the number of synthetic deletes.
  std::size_t replace(api::Kind kind, std::vector<api::Object> objects);
  // Whether pods stored through upsert(api::Object) and replace() keep status.conditions (the
  // default). Only PodLifeTime's `conditions` reads them, and a running pod carries 3 to 5 of them
  // (~150 bytes of the ~900 a cached pod costs): the daemon turns this off when no plugin it runs
  // reads them (framework::readsPodConditions). Pod.ready is decoded apart and always kept. Set it
  // before the caches fill: objects already stored keep what they had.
  void keepPodConditions(bool keep) { keepPodConditions_.store(keep, std::memory_order_relaxed); }
  // Drops from a pod about to be stored what this store does not keep (keepPodConditions).
  // upsert(api::Object) and replace() do it; a loader that makes the shared objects itself calls it.
  void trim(api::Object& object) const;

  // A consistent view; cached until the next change, so several readers share one. Taking one
  // copies the indexes' shard pointers (pod_index.h); only the first snapshot after the pods were
  // filled builds the indexes, and after a change to nodes, PDBs, namespaces, priority classes or
  // PVCs that part is built again.
  SnapshotPtr snapshot() const;
  std::size_t count(api::Kind kind) const;
  // Whether a node of that name is cached (the metrics collector forgets nodes that are gone).
  bool hasNode(const std::string& name) const;
  // Listeners run synchronously on the writer's thread, after the change is applied and without
  // the store lock held; they must be quick (queue work, do not decide) and must not subscribe.
  [[nodiscard]] Subscription subscribe(Listener listener);

 private:
  // An object's key as views into the object itself: a table entry is the object's pointer, and
  // "namespace/name" is built only by objectKey, never stored.
  struct KeyView {
    std::string_view ns;  // empty for cluster-scoped kinds
    std::string_view name;
    bool operator==(const KeyView&) const = default;
  };
  template <typename T>
  static KeyView keyOf(const T& o) {
    if constexpr (requires { o.ns.view(); }) {
      return {o.ns.view(), o.name};
    } else {
      return {{}, o.name};  // cluster-scoped
    }
  }
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const;
    template <typename T>
    std::size_t operator()(const std::shared_ptr<const T>& o) const {
      return (*this)(keyOf(*o));
    }
  };
  struct KeyEq {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
    static KeyView view(const KeyView& k) { return k; }
    template <typename T>
    static KeyView view(const std::shared_ptr<const T>& o) {
      return keyOf(*o);
    }
  };
  template <typename T>
  using Table = std::unordered_set<std::shared_ptr<const T>, KeyHash, KeyEq>;
  template <typename T>
  void upsertInto(Table<T>& table, std::shared_ptr<const T> obj);
  template <typename T>
  std::size_t replaceTable(Table<T>& table, std::vector<std::shared_ptr<const T>> objs);
  void notify(const std::vector<StoreEvent>& events);
  // Pod index upkeep, under mu_.
  void podAdded(const PodPtr& pod);
  void podChanged(const PodPtr& before, const PodPtr& after);
  void podRemoved(const PodPtr& pod);
  void retire(PodPtr pod);
  template <typename T>
  void changed();

  // What keeps a snapshot's pods alive: the pods that left the store after it was taken (a
  // snapshot's buckets point at pods, they do not own them). A snapshot holds the epoch that was
  // current when it was taken; each epoch holds the next, so an older snapshot keeps everything a
  // newer one does. A pod leaving while no snapshot holds the current epoch is freed at once.
  struct Epoch;

  mutable std::mutex mu_;
  Table<api::Pod> pods_;
  Table<api::Node> nodes_;
  Table<api::PodDisruptionBudget> pdbs_;
  Table<api::Namespace> namespaces_;
  Table<api::PriorityClass> priorityClasses_;
  Table<api::PersistentVolumeClaim> pvcs_;
  mutable SnapshotPtr cached_;
  mutable PodIndexes index_;
  mutable bool indexed_ = false;  // index_ follows pods_; false until the first snapshot, and after a relist
  mutable std::shared_ptr<const Catalog> catalog_;  // null after a change to a kind it holds
  mutable std::shared_ptr<Epoch> epoch_;
  std::atomic<bool> keepPodConditions_{true};
  // Held shared while listeners run (several writers notify at once), exclusively to change them:
  // no copy of the listeners per change, and an unsubscribe waits for a running listener.
  mutable std::shared_mutex listenersMu_;
  std::vector<std::pair<std::uint64_t, Listener>> listeners_;
  std::uint64_t nextListener_ = 1;
  void unsubscribe(std::uint64_t id);
};

// Keys as the API server uses them.
std::string objectKey(const api::Pod& p);
std::string objectKey(const api::Node& n);
std::string objectKey(const api::PodDisruptionBudget& p);
std::string objectKey(const api::Namespace& n);
std::string objectKey(const api::PriorityClass& p);
std::string objectKey(const api::PersistentVolumeClaim& p);

}  // namespace kdesched::cluster
