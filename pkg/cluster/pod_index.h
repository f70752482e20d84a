// The store's pod indexes, kept up to date from its own changes, and the frozen views a snapshot
// reads. A snapshot used to rebuild every index from all pods (12 ms at 30,000 pods, under the
// store lock, for every triggered run); now taking one copies a few hundred pointers.
//
// Scheme: a persistent hash trie with copy-on-write nodes. An index maps a key to a bucket, the
// pods of that key in snapshot order (namespace, then name: pods() order, so plugins see the
// same order as before). Keys sit in 4,096 small leaves under two levels of 64 slots chosen by
// the key's hash. A view is one pointer to the root; the store's next change under a shared node
// copies the path to its leaf (two arrays of 64 pointers and a leaf of a few keys) and the
// bucket it edits, so a view never changes, taking one is O(1), and after a snapshot the writer
// pays for what it touches, not for the index (a map of 30,000 label values copied whole per
// snapshot was the first try: 1.5 ms). The pods the buckets point at are kept alive by the
// snapshot's Epoch (store.h).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"

namespace kdesched::cluster {

using PodSpan = std::span<const api::Pod* const>;

// Snapshot order: namespace, then name.
inline bool podOrder(const api::Pod* a, const api::Pod* b) {
  if (a->ns != b->ns) return a->ns.view() < b->ns.view();
  return a->name < b->name;
}

struct SymbolHash {
  std::size_t operator()(const api::Symbol& s) const noexcept { return s.hash(); }
};
struct LabelHash {
  std::size_t operator()(const api::Labels::Item& kv) const noexcept { return kv.first.hash() * 31 + kv.second.hash(); }
};
struct StringHash {
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};

template <typename Key, typename Hash>
class PodIndex {
 public:
  using Bucket = std::vector<const api::Pod*>;

 private:
  struct Entry {
    std::uint64_t hash;
    Key key;
    std::shared_ptr<Bucket> bucket;
  };
  static constexpr std::size_t kFanout = 64;  // 6 bits of the hash per level
  using Leaf = std::vector<Entry>;
  using Mid = std::array<std::shared_ptr<Leaf>, kFanout>;
  using Top = std::array<std::shared_ptr<Mid>, kFanout>;

  template <typename K>
  static std::uint64_t hashOf(const K& key) {
    return static_cast<std::uint64_t>(Hash{}(key)) * 0x9e3779b97f4a7c15ULL;  // spread into the top bits
  }
  static std::size_t topSlot(std::uint64_t h) { return h >> 58; }
  static std::size_t midSlot(std::uint64_t h) { return (h >> 52) & (kFanout - 1); }

 public:
  // The index as it was when view() was called; never changes.
  class View {
   public:
    template <typename K>
    PodSpan find(const K& key) const {
      const std::uint64_t h = hashOf(key);
      if (!top_) return {};
      const auto& mid = (*top_)[topSlot(h)];
      if (!mid) return {};
      const auto& leaf = (*mid)[midSlot(h)];
      if (!leaf) return {};
      for (const Entry& e : *leaf)
        if (e.hash == h && std::equal_to<>()(e.key, key)) return {e.bucket->data(), e.bucket->size()};
      return {};
    }
    // Calls f(key, span) for every key, in no particular order.
    template <typename F>
    void forEach(F&& f) const {
      if (!top_) return;
      for (const auto& mid : *top_)
        if (mid)
          for (const auto& leaf : *mid)
            if (leaf)
              for (const Entry& e : *leaf) f(e.key, PodSpan(e.bucket->data(), e.bucket->size()));
    }

   private:
    friend class PodIndex;
    std::shared_ptr<const Top> top_;
  };

  View view() const {
    View v;
    v.top_ = top_;
    return v;
  }

  // Bulk filling: append, then sortAll() once.
  void append(const Key& key, const api::Pod* pod) { mutableBucket(key).push_back(pod); }
  void sortAll() {
    forEachBucket([](Bucket& b) {
      std::sort(b.begin(), b.end(), podOrder);
      b.shrink_to_fit();
    });
  }
  void clear() { top_.reset(); }

  void insert(const Key& key, const api::Pod* pod) {
    Bucket& b = mutableBucket(key);
    b.insert(std::upper_bound(b.begin(), b.end(), pod, podOrder), pod);
  }
  // Removes one entry of `pod` (by identity); a key left without pods is dropped.
  void erase(const Key& key, const api::Pod* pod) {
    const std::uint64_t h = hashOf(key);
    Leaf* leaf = mutableLeaf(h, false);
    if (!leaf) return;
    auto it = std::find_if(leaf->begin(), leaf->end(), [&](const Entry& e) { return e.hash == h && e.key == key; });
    if (it == leaf->end()) return;
    Bucket& b = own(it->bucket);
    auto at = locate(b, pod);
    if (at == b.end()) return;
    b.erase(at);
    if (b.empty()) leaf->erase(it);
  }
  // A new version of a pod (same namespace and name, so the same place) under the same key.
  void replace(const Key& key, const api::Pod* before, const api::Pod* after) {
    const std::uint64_t h = hashOf(key);
    Leaf* leaf = mutableLeaf(h, false);
    if (!leaf) return;
    for (Entry& e : *leaf)
      if (e.hash == h && e.key == key) {
        Bucket& b = own(e.bucket);
        // A pod listing one owner twice is in its bucket twice, side by side.
        for (auto at = locate(b, before); at != b.end() && *at == before; ++at) *at = after;
        return;
      }
  }

 private:
  // Where `pod` is in b (b.end() if it is not): a scan of the pointers in a short bucket, a
  // binary search by name in a long one (name comparisons cost more than 64 pointer compares).
  // One search, for the first entry not before `pod`: only a pod of the same namespace and name
  // (an older version, or the pod itself listed twice) can follow it before `pod` does.
  static typename Bucket::iterator locate(Bucket& b, const api::Pod* pod) {
    if (b.size() <= 64) return std::find(b.begin(), b.end(), pod);
    auto at = std::lower_bound(b.begin(), b.end(), pod, podOrder);
    for (; at != b.end() && *at != pod; ++at)
      if (podOrder(pod, *at)) return b.end();
    return at;
  }

  // Whether `p` is held by nobody but the store: then it may change in place. The fence pairs
  // with the release in a reader's last shared_ptr drop, so its reads happened before our writes.
  template <typename T>
  static bool exclusive(const std::shared_ptr<T>& p) {
    if (p.use_count() != 1) return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    return true;
  }
  template <typename T>
  static T& own(std::shared_ptr<T>& p) {
    if (!p) {
      p = std::make_shared<T>();
    } else if (!exclusive(p)) {
      p = std::make_shared<T>(*p);
    }
    return *p;
  }
  // The leaf for hash h, every level on its path made the store's own (copied if a view shares
  // it); null when there is none and `create` is false.
  Leaf* mutableLeaf(std::uint64_t h, bool create) {
    if (!create) {
      if (!top_) return nullptr;
      const auto& mid = (*top_)[topSlot(h)];
      if (!mid || !(*mid)[midSlot(h)]) return nullptr;
    }
    return &own(own(own(top_)[topSlot(h)])[midSlot(h)]);
  }
  Bucket& mutableBucket(const Key& key) {
    const std::uint64_t h = hashOf(key);
    Leaf& leaf = *mutableLeaf(h, true);
    for (Entry& e : leaf)
      if (e.hash == h && e.key == key) return own(e.bucket);
    leaf.push_back(Entry{h, key, std::make_shared<Bucket>()});
    return *leaf.back().bucket;
  }
  template <typename F>
  void forEachBucket(F&& f) {
    if (!top_) return;
    for (auto& mid : *top_)
      if (mid)
        for (auto& leaf : *mid)
          if (leaf)
            for (Entry& e : *leaf) f(*e.bucket);
  }

  std::shared_ptr<Top> top_;
};

// The pod indexes a snapshot shares with the store. Pods by label key are not among them: a key
// like `app` lists nearly every pod, and inserting into (or copying) a list that long on every
// pod added or removed cost more than all the other indexes together; only selector terms with
// Exists/Gt/Lt read it, and the snapshot builds it for them (Snapshot::podsWithLabelKey). Pods are added, removed and
// changed one at a time (add/remove/change), or all at once (build: append, then sort each bucket once).
class PodIndexes {
 public:
  using BySymbol = PodIndex<api::Symbol, SymbolHash>;
  using ByLabel = PodIndex<api::Labels::Item, LabelHash>;
  using ByOwner = PodIndex<std::string, StringHash>;

  struct Views {
    BySymbol::View byNode;  // bound pods only
    BySymbol::View byNamespace;
    ByLabel::View byLabel;
    ByOwner::View byOwner;  // ownerReferences' UIDs
    // Pods with required anti-affinity terms, by namespace (every phase, bound or not): what a
    // triggered run checks a newly placed pod against, without walking every pod.
    BySymbol::View antiAffinityByNamespace;
  };

  template <typename Range>
  void build(const Range& pods) {
    clear();
    for (const auto& p : pods) each(*p, [p = &*p](auto& index, const auto& key) { index.append(key, p); });
    byNode_.sortAll();
    byNamespace_.sortAll();
    byLabel_.sortAll();
    byOwner_.sortAll();
    antiAffinity_.sortAll();
  }
  void clear();
  void add(const api::Pod& pod);
  void remove(const api::Pod& pod);
  void change(const api::Pod& before, const api::Pod& after);
  Views views() const;

 private:
  // Calls f(index, key) for every index entry the pod has.
  template <typename F>
  void each(const api::Pod& p, F&& f) {
    if (!p.nodeName.empty()) f(byNode_, p.nodeName);
    f(byNamespace_, p.ns);
    for (const auto& kv : p.labels) f(byLabel_, kv);
    for (const auto& o : p.owners) f(byOwner_, o.uid);
    if (p.constraints().hasRequiredAntiAffinity()) f(antiAffinity_, p.ns);
  }

  BySymbol byNode_;
  BySymbol byNamespace_;
  ByLabel byLabel_;
  ByOwner byOwner_;
  BySymbol antiAffinity_;
};

}  // namespace kdesched::cluster
