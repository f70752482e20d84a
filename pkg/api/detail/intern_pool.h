// Hash-consing of shared immutable blocks: equal values get one shared copy. Used for what pods of
// one ReplicaSet repeat (scheduling constraints, image lists). Include from pkg/api .cpp files only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace kdesched::api::detail {

// Combines the hashes of a block's parts into the pool key (FNV-1a's step over whole words).
class HashMix {
 public:
  void add(std::size_t part) { h_ = (h_ ^ part) * 0x100000001b3ULL; }
  std::size_t value() const { return h_; }

 private:
  std::size_t h_ = 0xcbf29ce484222325ULL;
};

// Thread-safe. Sharded by hash so concurrent decoders rarely wait on the same lock. The pool holds
// weak references, so blocks no object uses any more are freed.
template <typename T>
class InternPool {
 public:
  std::shared_ptr<const T> intern(T value, std::size_t hash) {
    Shard& shard = shards_[(hash >> 7) % kShards];
    std::lock_guard<std::mutex> lock(shard.mu);
    auto [begin, end] = shard.entries.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
      if (auto existing = it->second.lock(); existing && *existing == value) return existing;
    }
    auto created = std::make_shared<const T>(std::move(value));
    shard.entries.emplace(hash, created);
    if (shard.entries.size() >= shard.sweepAt) sweep(shard);
    return created;
  }

 private:
  static constexpr std::size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    std::unordered_multimap<std::size_t, std::weak_ptr<const T>> entries;
    std::size_t sweepAt = 1024;
  };

  // Drops entries whose blocks were freed; the next sweep waits until the live set doubles, so
  // sweeping stays amortised O(1) per intern.
  static void sweep(Shard& shard) {
    std::erase_if(shard.entries, [](const auto& e) { return e.second.expired(); });
    shard.sweepAt = std::max<std::size_t>(1024, 2 * shard.entries.size());
  }

  std::array<Shard, kShards> shards_;
};

}  // namespace kdesched::api::detail
