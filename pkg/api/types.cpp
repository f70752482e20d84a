#include "pkg/api/types.h"

#include <algorithm>

#include "pkg/api/detail/intern_pool.h"

namespace kdesched::api {

std::string_view toString(PodPhase p) {
  switch (p) {
    case PodPhase::Pending: return "Pending";
    case PodPhase::Running: return "Running";
    case PodPhase::Succeeded: return "Succeeded";
    case PodPhase::Failed: return "Failed";
    case PodPhase::Unknown: return "Unknown";
  }
  return "Unknown";
}

std::string_view toString(QosClass q) {
  switch (q) {
    case QosClass::BestEffort: return "BestEffort";
    case QosClass::Burstable: return "Burstable";
    case QosClass::Guaranteed: return "Guaranteed";
  }
  return "BestEffort";
}

std::string_view toString(TaintEffect e) {
  switch (e) {
    case TaintEffect::None: return "";
    case TaintEffect::NoSchedule: return "NoSchedule";
    case TaintEffect::PreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::NoExecute: return "NoExecute";
  }
  return "";
}

OwnerRefs::OwnerRefs(std::vector<OwnerReference> refs) {
  if (refs.empty()) return;
  static auto* pool =
      new detail::InternPool<std::vector<OwnerReference>>();  // never destroyed: pods may outlive statics
  detail::HashMix hash;
  for (const auto& o : refs) {
    for (std::size_t part : {o.apiVersion.hash(), o.kind.hash(), o.name.hash(), std::hash<std::string>()(o.uid),
                             std::size_t{o.controller}}) {
      hash.add(part);
    }
  }
  refs.shrink_to_fit();
  refs_ = pool->intern(std::move(refs), hash.value());
}

const std::vector<OwnerReference>& OwnerRefs::list() const {
  static const auto* none = new std::vector<OwnerReference>();  // never destroyed, as above
  return refs_ ? *refs_ : *none;
}

void OwnerRefs::push_back(OwnerReference ref) {
  std::vector<OwnerReference> refs = list();
  refs.push_back(std::move(ref));
  *this = OwnerRefs(std::move(refs));
}

// A cached pod is one heap chunk with its shared_ptr control block (16 bytes); 256 + 16 fits the
// 288-byte chunk, 272 + 16 would take 304 (glibc: size + 8, rounded up to 16).
static_assert(sizeof(void*) != 8 || sizeof(Pod) <= 256, "Pod grew: see the field order in types.h");

SharedResourceList::SharedResourceList(ResourceList list) {
  if (list.empty()) return;
  static auto* pool = new detail::InternPool<ResourceList>();  // never destroyed, as above
  detail::HashMix hash;
  for (const auto& [name, milli] : list) {
    hash.add(name.hash());
    hash.add(std::hash<std::int64_t>()(milli));
  }
  list.shrinkToFit();
  list_ = pool->intern(std::move(list), hash.value());
}

const ResourceList& SharedResourceList::list() const {
  static const auto* none = new ResourceList();  // never destroyed, as above
  return list_ ? *list_ : *none;
}

void SharedResourceList::set(const Symbol& name, std::int64_t milli) {
  ResourceList copy = list();
  copy.set(name, milli);
  *this = SharedResourceList(std::move(copy));
}

bool Pod::hasOwnerKind(std::string_view kind) const {
  return std::any_of(owners.begin(), owners.end(), [&](const OwnerReference& o) { return o.kind.view() == kind; });
}

// metav1.GetControllerOf: the first owner reference marked as controller.
const OwnerReference* Pod::controllerRef() const {
  for (const auto& o : owners) {
    if (o.controller) return &o;
  }
  return nullptr;
}

const SchedulingConstraints& Pod::constraints() const {
  static const SchedulingConstraints kNone;
  return scheduling ? *scheduling : kNone;
}

std::string PodName::key() const { return ns.str() + "/" + name; }

std::string Pod::key() const {
  std::string out;
  out.reserve(ns.view().size() + 1 + name.size());
  out += ns.view();
  out += '/';
  out += name;
  return out;
}

std::string PodDisruptionBudget::key() const {
  std::string out;
  out.reserve(ns.view().size() + 1 + name.size());
  out += ns.view();
  out += '/';
  out += name;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Hashing of SchedulingConstraints. Only has to agree with operator==: equal values hash equal.

namespace {

class Hasher {
 public:
  void add(std::size_t v) { h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2); }
  void add(std::string_view s) { add(std::hash<std::string_view>()(s)); }
  void add(const std::string& s) { add(std::string_view(s)); }
  void add(bool b) { add(std::size_t{b ? 1u : 2u}); }
  void add(std::int32_t v) { add(static_cast<std::size_t>(v)); }
  void add(std::int64_t v) { add(static_cast<std::size_t>(v)); }
  template <typename E>
  requires std::is_enum_v<E>
  void add(E e) { add(static_cast<std::size_t>(e)); }
  template <typename T>
  void add(const std::optional<T>& o) {
    add(o.has_value());
    if (o) add(*o);
  }
  template <typename T>
  void add(const std::vector<T>& v) {
    add(v.size());
    for (const auto& x : v) add(x);
  }
  template <typename A, typename B>
  void add(const std::pair<A, B>& p) {
    add(p.first);
    add(p.second);
  }
  void add(const LabelSelectorRequirement& r) {
    add(r.key);
    add(r.op);
    add(r.values);
  }
  void add(const LabelSelector& s) {
    add(s.matchLabels);
    add(s.matchExpressions);
  }
  void add(const NodeSelectorRequirement& r) {
    add(r.key);
    add(r.op);
    add(r.values);
  }
  void add(const NodeSelectorTerm& t) {
    add(t.matchExpressions);
    add(t.matchFields);
  }
  void add(const NodeSelector& s) { add(s.terms); }
  void add(const PreferredSchedulingTerm& t) {
    add(t.weight);
    add(t.preference);
  }
  void add(const NodeAffinity& a) {
    add(a.required);
    add(a.preferred);
  }
  void add(const PodAffinityTerm& t) {
    add(t.labelSelector);
    add(t.namespaces);
    add(t.namespaceSelector);
    add(t.topologyKey);
    add(t.matchLabelKeys);
    add(t.mismatchLabelKeys);
  }
  void add(const WeightedPodAffinityTerm& t) {
    add(t.weight);
    add(t.term);
  }
  void add(const PodAffinity& a) {
    add(a.required);
    add(a.preferred);
  }
  void add(const Toleration& t) {
    add(t.key);
    add(t.op);
    add(t.value);
    add(t.effect);
    add(t.tolerationSeconds);
  }
  void add(const TopologySpreadConstraint& c) {
    add(c.maxSkew);
    add(c.topologyKey);
    add(c.whenUnsatisfiable);
    add(c.labelSelector);
    add(c.minDomains);
    add(c.nodeAffinityPolicy);
    add(c.nodeTaintsPolicy);
    add(c.matchLabelKeys);
  }
  std::size_t value() const { return h_; }

 private:
  std::size_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::size_t hashConstraints(const SchedulingConstraints& c) {
  Hasher h;
  h.add(c.nodeSelector);
  h.add(c.nodeAffinity);
  h.add(c.podAffinity);
  h.add(c.podAntiAffinity);
  h.add(c.tolerations);
  h.add(c.topologySpreadConstraints);
  return h.value();
}

std::shared_ptr<const SchedulingConstraints> internConstraints(SchedulingConstraints c) {
  static auto* pool = new detail::InternPool<SchedulingConstraints>();  // never destroyed: pods may outlive statics
  const std::size_t hash = hashConstraints(c);
  return pool->intern(std::move(c), hash);
}

}  // namespace kdesched::api
