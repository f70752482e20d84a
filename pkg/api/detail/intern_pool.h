// Hash-consing of shared immutable blocks: equal values get one shared copy. Used for what pods of
// one ReplicaSet repeat (scheduling constraints, image lists). Include from pkg/api .cpp files only.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

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
//
// Each shard is an open-addressing table (linear probing) of {hash, weak reference}: a look-up
// reads one run of adjacent slots, then the block it finds. A node-based multimap cost a cache
// miss per node on the way (about a fifth of decoding a watch event at S2). A slot whose block
// was freed stays in place, so probe runs are never cut, and is reused by the next insert on its
// run; the table is rebuilt without them when it is half full.
template <typename T>
class InternPool {
 public:
  std::shared_ptr<const T> intern(T value, std::size_t hash) {
    const std::uint64_t mixed = mix(hash);
    Shard& shard = shards_[mixed >> 60];
    std::lock_guard<std::mutex> lock(shard.mu);
    if (shard.slots.empty()) shard.rebuild();
    const std::size_t mask = shard.slots.size() - 1;
    Slot* reusable = nullptr;
    for (std::size_t i = mixed & mask;; i = (i + 1) & mask) {
      Slot& slot = shard.slots[i];
      if (!slot.used) {
        if (!reusable) reusable = &slot;
        break;
      }
      if (slot.hash != hash) continue;
      if (auto existing = slot.ref.lock()) {
        if (*existing == value) return existing;
      } else if (!reusable) {
        reusable = &slot;  // a freed block of the same hash: its slot takes the new one
      }
    }
    auto created = std::make_shared<const T>(std::move(value));
    if (!reusable->used) ++shard.used;
    *reusable = Slot{hash, created, true};
    if (2 * shard.used >= shard.slots.size()) shard.rebuild();
    return created;
  }

  // Slots in use (live or freed blocks) over all shards: for tests.
  std::size_t slotsInUse() {
    std::size_t n = 0;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> lock(s.mu);
      n += s.used;
    }
    return n;
  }

 private:
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kMinSlots = 64;

  // The pool keys combine pointer hashes (aligned, so low bits repeat) by multiplication, which
  // never carries into lower bits: mix every bit into the high ones the shard and slot read.
  static std::uint64_t mix(std::uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
  }

  struct Slot {
    std::size_t hash = 0;
    std::weak_ptr<const T> ref;
    bool used = false;
  };
  struct Shard {
    std::mutex mu;
    std::vector<Slot> slots;  // a power of two in size, at most half used
    std::size_t used = 0;

    // Re-inserts the live blocks into a table at most a quarter full, so half full comes again
    // only after as many inserts as there are live blocks: amortised O(1) per intern.
    void rebuild() {
      std::vector<Slot> old = std::move(slots);
      std::size_t live = 0;
      for (const Slot& s : old) live += s.used && !s.ref.expired();
      slots.assign(std::max(kMinSlots, std::bit_ceil(4 * live)), Slot{});
      used = 0;
      const std::size_t mask = slots.size() - 1;
      for (Slot& s : old) {
        if (!s.used || s.ref.expired()) continue;
        std::size_t i = mix(s.hash) & mask;
        while (slots[i].used) i = (i + 1) & mask;
        slots[i] = std::move(s);
        ++used;
      }
    }
  };

  std::array<Shard, kShards> shards_;
};

}  // namespace kdesched::api::detail
