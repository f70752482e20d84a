// The pod status detail's shared parts: interned condition kinds and image lists.
#include <array>
#include <functional>
#include <limits>
#include <mutex>
#include <unordered_set>

#include "pkg/api/detail/intern_pool.h"
#include "pkg/api/types.h"

namespace kdesched::api {

struct PodCondition::Kind {
  Symbol type;
  Symbol status;
  Symbol reason;
  bool operator==(const Kind&) const = default;
};

namespace {

constexpr Timestamp kNoTime = std::numeric_limits<Timestamp>::min();

struct KindHash {
  std::size_t operator()(const PodCondition::Kind& k) const noexcept {
    return k.type.hash() ^ (k.status.hash() * 31) ^ (k.reason.hash() * 1000003);
  }
};

// Kinds live for the whole process (and hold their Symbols): the vocabulary of condition types,
// statuses and reasons is the cluster's, bounded, not its churn (unlike label values). A per-thread cache keeps
// decoding lock-free.
const PodCondition::Kind* internKind(const PodCondition::Kind& k) {
  constexpr std::size_t kSlots = 256;
  thread_local std::array<const PodCondition::Kind*, kSlots> cache{};
  const PodCondition::Kind*& slot = cache[KindHash()(k) & (kSlots - 1)];
  if (slot != nullptr && *slot == k) return slot;
  static auto* mu = new std::mutex();
  static auto* kinds = new std::unordered_set<PodCondition::Kind, KindHash>();  // node-based: stable addresses
  std::lock_guard<std::mutex> lock(*mu);
  slot = &*kinds->insert(k).first;
  return slot;
}

}  // namespace

PodCondition::PodCondition() : PodCondition(Symbol(), Symbol(), Symbol(), std::nullopt) {}

PodCondition::PodCondition(Symbol type, Symbol status, Symbol reason, std::optional<Timestamp> lastTransitionTime)
    : kind_(internKind(Kind{type, status, reason})), lastTransition_(lastTransitionTime.value_or(kNoTime)) {}

std::string_view PodCondition::type() const { return kind_->type.view(); }
std::string_view PodCondition::status() const { return kind_->status.view(); }
std::string_view PodCondition::reason() const { return kind_->reason.view(); }

std::optional<Timestamp> PodCondition::lastTransitionTime() const {
  if (lastTransition_ == kNoTime) return std::nullopt;
  return lastTransition_;
}

std::shared_ptr<const ImageList> internImages(ImageList images) {
  static auto* pool = new detail::InternPool<ImageList>();  // never destroyed: pods may outlive statics
  detail::HashMix hash;
  for (const Symbol& s : images) hash.add(s.hash());
  return pool->intern(std::move(images), hash.value());
}

const PodStatusDetail& Pod::status() const {
  static const PodStatusDetail kNone;
  return statusDetail ? *statusDetail : kNone;
}

const ImageList& Pod::containerImages() const {
  static const ImageList kNone;
  return images ? *images : kNone;
}

}  // namespace kdesched::api
