// The Kubernetes object model kdesched decides on: only the fields decisions need, compact.
// Value types; the scheduling-related parts of a pod spec are shared immutable blocks so pods of one
// ReplicaSet can point at one copy.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/api/quantity.h"
#include "pkg/api/symbol.h"
#include "pkg/api/uid.h"

namespace kdesched::api {

// Seconds since the Unix epoch (Kubernetes timestamps have second precision on the wire).
using Timestamp = std::int64_t;

// An optional timestamp in 8 bytes (std::optional<Timestamp> takes 16, and a cached pod has
// three). The one value it cannot hold, the smallest int64, is no RFC 3339 time.
class OptionalTime {
 public:
  constexpr OptionalTime() = default;
  constexpr OptionalTime(std::nullopt_t) {}                                    // NOLINT(google-explicit-constructor)
  constexpr OptionalTime(Timestamp t) : t_(t) {}                               // NOLINT(google-explicit-constructor)
  constexpr OptionalTime(std::optional<Timestamp> t) : t_(t ? *t : kUnset) {}  // NOLINT(google-explicit-constructor)

  constexpr bool has_value() const { return t_ != kUnset; }  // NOLINT(readability-identifier-naming): optional's API
  constexpr explicit operator bool() const { return has_value(); }
  constexpr Timestamp operator*() const { return t_; }
  constexpr Timestamp value_or(Timestamp otherwise) const { return has_value() ? t_ : otherwise; }
  constexpr void reset() { t_ = kUnset; }
  constexpr bool operator==(const OptionalTime&) const = default;

 private:
  static constexpr Timestamp kUnset = std::numeric_limits<Timestamp>::min();
  Timestamp t_ = kUnset;
};

// ---------------------------------------------------------------------------------------------
// Node selectors and node affinity (core/v1 NodeSelector*).
enum class NodeSelectorOp { In, NotIn, Exists, DoesNotExist, Gt, Lt };

struct NodeSelectorRequirement {
  std::string key;
  NodeSelectorOp op = NodeSelectorOp::In;
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

// Expressions and fields are ANDed. A term with no expressions and no fields matches no node.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> matchExpressions;
  std::vector<NodeSelectorRequirement> matchFields;  // only key metadata.name is legal
  bool operator==(const NodeSelectorTerm&) const = default;
};

// Terms are ORed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  bool operator==(const NodeSelector&) const = default;
};

struct PreferredSchedulingTerm {
  std::int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<PreferredSchedulingTerm> preferred;
  bool operator==(const NodeAffinity&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Pod (anti-)affinity.
struct PodAffinityTerm {
  std::optional<LabelSelector> labelSelector;  // unset matches no pod
  std::vector<std::string> namespaces;
  std::optional<LabelSelector> namespaceSelector;  // set and empty = all namespaces
  std::string topologyKey;
  std::vector<std::string> matchLabelKeys;
  std::vector<std::string> mismatchLabelKeys;
  bool operator==(const PodAffinityTerm&) const = default;
};

struct WeightedPodAffinityTerm {
  std::int32_t weight = 0;
  PodAffinityTerm term;
  bool operator==(const WeightedPodAffinityTerm&) const = default;
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  bool operator==(const PodAffinity&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Taints and tolerations.
enum class TaintEffect { None, NoSchedule, PreferNoSchedule, NoExecute };  // None = empty (tolerations only)

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::NoSchedule;
  bool operator==(const Taint&) const = default;
};

// Gt/Lt compare the taint's value with the toleration's as integers (TaintTolerationComparisonOperators).
// Unknown is an operator this build does not know, one a newer API server may allow: it tolerates
// nothing, as upstream's ToleratesTaint does for any operator it does not know.
enum class TolerationOp { Equal, Exists, Gt, Lt, Unknown };

struct Toleration {
  std::string key;  // empty with Exists tolerates every key
  TolerationOp op = TolerationOp::Equal;
  std::string value;
  TaintEffect effect = TaintEffect::None;  // None tolerates every effect
  std::optional<std::int64_t> tolerationSeconds;
  bool operator==(const Toleration&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Topology spread.
enum class UnsatisfiableAction { DoNotSchedule, ScheduleAnyway };
enum class InclusionPolicy { Honor, Ignore };

struct TopologySpreadConstraint {
  std::int32_t maxSkew = 1;
  std::string topologyKey;
  UnsatisfiableAction whenUnsatisfiable = UnsatisfiableAction::DoNotSchedule;
  std::optional<LabelSelector> labelSelector;
  std::optional<std::int32_t> minDomains;
  std::optional<InclusionPolicy> nodeAffinityPolicy;  // unset = Honor
  std::optional<InclusionPolicy> nodeTaintsPolicy;    // unset = Ignore
  std::vector<std::string> matchLabelKeys;
  bool operator==(const TopologySpreadConstraint&) const = default;
};

// Everything about where a pod may run, shared between pods with identical specs.
struct SchedulingConstraints {
  std::vector<std::pair<std::string, std::string>> nodeSelector;  // spec.nodeSelector, sorted by key
  std::optional<NodeAffinity> nodeAffinity;
  std::optional<PodAffinity> podAffinity;
  std::optional<PodAffinity> podAntiAffinity;
  std::vector<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topologySpreadConstraints;
  bool operator==(const SchedulingConstraints&) const = default;

  bool hasNodeAffinityOrSelector() const { return !nodeSelector.empty() || nodeAffinity.has_value(); }
  bool hasRequiredAntiAffinity() const { return podAntiAffinity && !podAntiAffinity->required.empty(); }
};

// Returns the shared copy of `c`: pods whose constraints are equal get the same pointer, so the
// identical affinity/toleration blocks of a ReplicaSet's pods cost one allocation. Thread-safe.
// The pool holds weak references, so blocks no pod uses any more are freed.
std::shared_ptr<const SchedulingConstraints> internConstraints(SchedulingConstraints c);
std::size_t hashConstraints(const SchedulingConstraints& c);

// ---------------------------------------------------------------------------------------------
struct OwnerReference {
  Symbol apiVersion;
  Symbol kind;
  Symbol name;
  std::string uid;
  bool controller = false;
  bool operator==(const OwnerReference&) const = default;
};

// A pod's owner references, immutable and hash-consed: the pods of one ReplicaSet share one copy.
// Reads like a vector; push_back and clear copy the list (tests and builders, not the decoder).
class OwnerRefs {
 public:
  OwnerRefs() = default;
  OwnerRefs(std::initializer_list<OwnerReference> refs) : OwnerRefs(std::vector<OwnerReference>(refs)) {}
  explicit OwnerRefs(std::vector<OwnerReference> refs);

  const std::vector<OwnerReference>& list() const;
  std::size_t size() const { return list().size(); }
  bool empty() const { return refs_ == nullptr; }
  auto begin() const { return list().begin(); }
  auto end() const { return list().end(); }
  const OwnerReference& front() const { return list().front(); }
  const OwnerReference& operator[](std::size_t i) const { return list()[i]; }
  void push_back(OwnerReference ref);
  void clear() { refs_.reset(); }
  bool operator==(const OwnerRefs& o) const { return refs_ == o.refs_ || list() == o.list(); }

 private:
  std::shared_ptr<const std::vector<OwnerReference>> refs_;  // null when there are none
};

// A pod's effective requests, immutable and hash-consed like OwnerRefs: the pods of one workload
// share one list (a cached pod keeps 16 bytes instead of a vector and its block). Reads like a
// ResourceList and converts to one; set() copies the list (tests and builders, not the decoder).
class SharedResourceList {
 public:
  SharedResourceList() = default;
  SharedResourceList(ResourceList list);  // NOLINT(google-explicit-constructor): interns

  const ResourceList& list() const;
  operator const ResourceList&() const { return list(); }  // NOLINT(google-explicit-constructor)
  std::int64_t get(const Symbol& name) const { return list().get(name); }
  bool has(const Symbol& name) const { return list().has(name); }
  std::size_t size() const { return list().size(); }
  bool empty() const { return list_ == nullptr; }
  auto begin() const { return list().begin(); }
  auto end() const { return list().end(); }
  void set(const Symbol& name, std::int64_t milli);
  std::string toString() const { return list().toString(); }
  bool operator==(const SharedResourceList& o) const { return list_ == o.list_ || list() == o.list(); }
  bool operator==(const ResourceList& o) const { return list() == o; }

 private:
  std::shared_ptr<const ResourceList> list_;  // null when empty
};

enum class PodPhase { Pending, Running, Succeeded, Failed, Unknown };
enum class QosClass { BestEffort, Burstable, Guaranteed };

std::string_view toString(PodPhase p);
std::string_view toString(QosClass q);
std::string_view toString(TaintEffect e);

// Container resources as declared; kept so requests can be recomputed and QoS derived.
struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
  bool restartableInit = false;  // init container with restartPolicy Always (a sidecar)
};

// ---------------------------------------------------------------------------------------------
// Pod status detail: what RemoveFailedPods, RemovePodsHavingTooManyRestarts and PodLifeTime read.
enum class ContainerKind : std::uint8_t { Regular, Init, Ephemeral };

// One entry of status.{,init,ephemeral}containerStatuses. The container's name is not kept: no
// upstream plugin reads it. Statuses with nothing beyond the defaults (no restarts, not waiting
// with a reason, not terminated) are not kept either, as no plugin can tell them from absent.
struct ContainerStatus {
  ContainerKind kind = ContainerKind::Regular;
  std::int32_t restartCount = 0;
  Symbol waitingReason;                  // state.waiting.reason
  Symbol terminatedReason;               // state.terminated.reason
  std::optional<std::int32_t> exitCode;  // state.terminated.exitCode; set exactly when terminated
  bool terminated() const { return exitCode.has_value(); }
  bool isDefault() const { return restartCount == 0 && waitingReason.empty() && !terminated(); }
  bool operator==(const ContainerStatus&) const = default;
};

// One status.conditions entry. Every running pod has four or five of them, so type, status and
// reason (a small vocabulary) are interned together: a condition costs 16 bytes.
class PodCondition {
 public:
  PodCondition();
  PodCondition(Symbol type, Symbol status, Symbol reason, std::optional<Timestamp> lastTransitionTime);
  PodCondition(std::string_view type, std::string_view status, std::string_view reason,
               std::optional<Timestamp> lastTransitionTime)
      : PodCondition(Symbol(type), Symbol(status), Symbol(reason), lastTransitionTime) {}
  std::string_view type() const;
  std::string_view status() const;  // "True", "False" or "Unknown", as written
  std::string_view reason() const;
  std::optional<Timestamp> lastTransitionTime() const;
  bool operator==(const PodCondition& o) const { return kind_ == o.kind_ && lastTransition_ == o.lastTransition_; }

  struct Kind;

 private:
  const Kind* kind_;
  Timestamp lastTransition_;  // kNoTime when unset
};

// Shared immutable; a pod points at none when its status has nothing here.
struct PodStatusDetail {
  Symbol reason;                            // status.reason (e.g. Evicted, NodeLost)
  std::vector<ContainerStatus> containers;  // only the non-default ones, in API order per kind
  std::vector<PodCondition> conditions;     // in API order
  // status.nominatedNodeName: the scheduler's preemption picked this node for the pod and is
  // making room there.
  Symbol nominatedNodeName;
  bool empty() const { return reason.empty() && containers.empty() && conditions.empty() && nominatedNodeName.empty(); }
  bool operator==(const PodStatusDetail&) const = default;
};

// The images of a pod's regular containers in order, shared between pods with the same list.
using ImageList = std::vector<Symbol>;
std::shared_ptr<const ImageList> internImages(ImageList images);

// Fields ordered so the struct has no padding: 256 bytes (272 with the 4-byte enums and the flags
// spread out), which with its shared_ptr control block is one 288-byte heap chunk instead of 304.
struct Pod {
  Symbol ns;
  std::string name;
  Uid uid;
  Labels labels;
  OwnerRefs owners;
  Symbol nodeName;  // empty = not bound
  PodPhase phase = PodPhase::Pending;
  QosClass qos = QosClass::BestEffort;   // status.qosClass when present, else computed
  std::optional<std::int32_t> priority;  // unset differs from 0
  Symbol priorityClassName;
  SharedResourceList requests;                              // effective requests as kube-scheduler computes them
  std::shared_ptr<const SchedulingConstraints> scheduling;  // never null after decoding
  std::vector<std::string> pvcClaimNames;  // persistentVolumeClaim volumes (and ephemeral volumes' PVCs)
  OptionalTime creationTimestamp;
  OptionalTime deletionTimestamp;
  OptionalTime startTime;
  std::shared_ptr<const ImageList> images;              // null when the spec has no containers
  std::shared_ptr<const PodStatusDetail> statusDetail;  // null when there is nothing in it
  Symbol configSource;                                  // annotation kubernetes.io/config.source (empty when absent)
  bool hasLocalStorage = false;                         // an emptyDir or hostPath volume
  bool hasResourceClaims = false;                       // spec.resourceClaims non-empty
  bool ready = false;                                   // status condition Ready=True
  bool schedulingGated = false;                         // spec.schedulingGates non-empty

  // Annotations kdesched honours.
  bool annotationEvict = false;             // descheduler.alpha.kubernetes.io/evict
  bool annotationPreferNoEviction = false;  // descheduler.alpha.kubernetes.io/prefer-no-eviction
  bool mirror = false;                      // kubernetes.io/config.mirror

  bool isTerminating() const { return deletionTimestamp.has_value(); }
  bool isTerminal() const { return phase == PodPhase::Succeeded || phase == PodPhase::Failed; }
  bool isStatic() const { return !configSource.empty() && configSource.view() != "api"; }
  bool hasOwnerKind(std::string_view kind) const;
  const OwnerReference* controllerRef() const;
  const SchedulingConstraints& constraints() const;
  const PodStatusDetail& status() const;     // an empty detail when statusDetail is null
  const ImageList& containerImages() const;  // empty when images is null
  std::string key() const;                   // "namespace/name"
};

// A pod's identity across snapshots, for the pods a run is scoped to and those it comes back to:
// namespace and name (a pod replaced under the same name is the same candidate).
struct PodName {
  Symbol ns;
  std::string name;
  static PodName of(const Pod& p) { return {p.ns, p.name}; }
  std::string key() const;  // "namespace/name", for people
  bool operator==(const PodName&) const = default;
  bool operator<(const PodName& o) const { return ns == o.ns ? name < o.name : ns < o.ns; }
};
// A PodName to look up by, without copying the pod's name.
struct PodNameRef {
  const Symbol& ns;
  std::string_view name;
};
struct PodNameHash {
  using is_transparent = void;
  std::size_t operator()(const PodName& p) const { return (*this)(PodNameRef{p.ns, p.name}); }
  std::size_t operator()(const PodNameRef& p) const {
    return std::hash<Symbol>()(p.ns) * 31 ^ std::hash<std::string_view>()(p.name);
  }
};
struct PodNameEq {
  using is_transparent = void;
  bool operator()(const PodName& a, const PodName& b) const { return a == b; }
  bool operator()(const PodNameRef& a, const PodName& b) const { return a.ns == b.ns && a.name == b.name; }
  bool operator()(const PodName& a, const PodNameRef& b) const { return (*this)(b, a); }
};
using PodNames = std::unordered_set<PodName, PodNameHash, PodNameEq>;

struct Node {
  std::string name;
  Symbol nameSym;
  Labels labels;
  std::vector<Taint> taints;
  bool unschedulable = false;
  // Ready condition: unset when the node reports no Ready condition at all.
  std::optional<bool> readyCondition;
  ResourceList allocatable;  // status.allocatable, or status.capacity when allocatable is empty
  OptionalTime creationTimestamp;

  // Upstream's "ready": no Ready condition whose status is anything other than True.
  bool isReady() const { return readyCondition.value_or(true); }
};

// int or percent, as in IntOrString fields of PDBs.
struct IntOrPercent {
  bool isPercent = false;
  std::int32_t value = 0;  // the integer, or the percentage number
  bool operator==(const IntOrPercent&) const = default;
};

struct PodDisruptionBudget {
  Symbol ns;
  std::string name;
  std::optional<LabelSelector> selector;  // policy/v1: unset matches no pod, empty matches all in ns
  std::optional<IntOrPercent> minAvailable;
  std::optional<IntOrPercent> maxUnavailable;
  bool unhealthyAlwaysAllow = false;  // spec.unhealthyPodEvictionPolicy: AlwaysAllow
  std::int64_t generation = 0;
  // status
  std::int64_t observedGeneration = 0;
  std::optional<std::int32_t> disruptionsAllowed;
  std::int32_t currentHealthy = 0;
  std::int32_t desiredHealthy = 0;
  std::int32_t expectedPods = 0;
  bool hasStatus = false;
  std::string key() const;
};

struct Namespace {
  std::string name;
  Labels labels;
  bool terminating = false;
};

struct PriorityClass {
  std::string name;
  std::int32_t value = 0;
};

struct PersistentVolumeClaim {
  Symbol ns;
  std::string name;
  std::optional<std::string> storageClassName;
};

// Well-known names.
inline constexpr std::string_view kAnnotationEvict = "descheduler.alpha.kubernetes.io/evict";
inline constexpr std::string_view kAnnotationPreferNoEviction = "descheduler.alpha.kubernetes.io/prefer-no-eviction";
inline constexpr std::string_view kAnnotationMirror = "kubernetes.io/config.mirror";
inline constexpr std::string_view kAnnotationConfigSource = "kubernetes.io/config.source";
inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::int32_t kSystemCriticalPriority = 2000000000;

}  // namespace kdesched::api
