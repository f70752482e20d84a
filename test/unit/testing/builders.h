// In-memory Kubernetes objects for unit tests, built fluently:
//   auto p = PodBuilder("payment").node("node2").labels({{"app", "payment"}}).antiAffinity("app", "order").build();
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/cluster/store.h"

namespace kdesched::api {
inline void PrintTo(const PodName& p, std::ostream* os) { *os << p.key(); }
}  // namespace kdesched::api

namespace kdesched::testing {

// A pod's identity from "namespace/name", and the identities of a scope as sorted keys: tests
// speak of pods as people do.
inline api::PodName podName(std::string_view key) {
  const auto slash = key.find('/');
  return {api::Symbol(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}
inline std::shared_ptr<const api::PodNames> podNames(std::initializer_list<std::string_view> keys) {
  auto out = std::make_shared<api::PodNames>();
  for (std::string_view k : keys) out->insert(podName(k));
  return out;
}
inline std::vector<std::string> sortedKeys(const api::PodNames& names) {
  std::vector<std::string> out;
  for (const api::PodName& n : names) out.push_back(n.key());
  std::sort(out.begin(), out.end());
  return out;
}

inline api::ResourceList resources(std::int64_t cpuMilli, std::int64_t memBytes, std::int64_t pods = -1) {
  api::ResourceList r;
  r.set(api::kCpu(), cpuMilli);
  r.set(api::kMemory(), memBytes * 1000);
  if (pods >= 0) r.set(api::kPods(), pods * 1000);
  return r;
}

inline constexpr std::int64_t kGi = 1024LL * 1024 * 1024;
inline constexpr std::int64_t kMi = 1024LL * 1024;

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) {
    n_.name = name;
    n_.nameSym = api::Symbol(name);
    n_.labels.set(api::kLabelHostname, name);
    n_.allocatable = resources(4000, 8 * kGi, 110);
  }
  NodeBuilder& label(std::string_view k, std::string_view v) {
    n_.labels.set(k, v);
    return *this;
  }
  NodeBuilder& zone(std::string_view z) { return label("topology.kubernetes.io/zone", z); }
  NodeBuilder& taint(std::string key, std::string value, api::TaintEffect e) {
    n_.taints.push_back({std::move(key), std::move(value), e});
    return *this;
  }
  NodeBuilder& unschedulable() {
    n_.unschedulable = true;
    return *this;
  }
  NodeBuilder& notReady() {
    n_.readyCondition = false;
    return *this;
  }
  NodeBuilder& allocatable(std::int64_t cpuMilli, std::int64_t memBytes, std::int64_t pods = 110) {
    n_.allocatable = resources(cpuMilli, memBytes, pods);
    return *this;
  }
  NodeBuilder& extended(std::string_view name, std::int64_t units) {
    n_.allocatable.set(api::Symbol(name), units * 1000);
    return *this;
  }
  std::shared_ptr<const api::Node> build() const { return std::make_shared<const api::Node>(n_); }

 private:
  api::Node n_;
};

class PodBuilder {
 public:
  explicit PodBuilder(std::string name, std::string ns = "default") {
    p_.name = name;
    p_.ns = api::Symbol(ns);
    p_.uid = "uid-" + ns + "-" + name;
    p_.phase = api::PodPhase::Running;
    p_.ready = true;
    p_.qos = api::QosClass::Burstable;
    p_.requests = resources(100, 128 * kMi);
    p_.startTime = 1000;
    p_.creationTimestamp = 1000;
    owner("ReplicaSet", name + "-rs");
  }
  PodBuilder& node(std::string_view n) {
    p_.nodeName = api::Symbol(n);
    return *this;
  }
  PodBuilder& label(std::string_view k, std::string_view v) {
    p_.labels.set(k, v);
    return *this;
  }
  PodBuilder& app(std::string_view v) { return label("app", v); }
  PodBuilder& owner(std::string kind, std::string name) {
    p_.owners = {{api::Symbol("apps/v1"), api::Symbol(kind), api::Symbol(name), "uid-" + name, true}};
    return *this;
  }
  PodBuilder& ownerUid(std::string kind, std::string name, std::string uid) {
    p_.owners = {{api::Symbol("apps/v1"), api::Symbol(kind), api::Symbol(name), std::move(uid), true}};
    return *this;
  }
  PodBuilder& uid(std::string_view u) {
    p_.uid = u;
    return *this;
  }
  PodBuilder& bare() {
    p_.owners.clear();
    return *this;
  }
  PodBuilder& priority(std::int32_t v) {
    p_.priority = v;
    return *this;
  }
  PodBuilder& qos(api::QosClass q) {
    p_.qos = q;
    return *this;
  }
  PodBuilder& phase(api::PodPhase ph) {
    p_.phase = ph;
    return *this;
  }
  PodBuilder& terminating() {
    p_.deletionTimestamp = 2000;
    return *this;
  }
  PodBuilder& notReady() {
    p_.ready = false;
    return *this;
  }
  PodBuilder& requests(std::int64_t cpuMilli, std::int64_t memBytes) {
    p_.requests = resources(cpuMilli, memBytes);
    return *this;
  }
  PodBuilder& request(std::string_view res, std::int64_t milli) {
    p_.requests.set(api::Symbol(res), milli);
    return *this;
  }
  PodBuilder& localStorage() {
    p_.hasLocalStorage = true;
    return *this;
  }
  PodBuilder& pvc(std::string claim) {
    p_.pvcClaimNames.push_back(std::move(claim));
    return *this;
  }
  PodBuilder& mirror() {
    p_.mirror = true;
    return *this;
  }
  PodBuilder& staticPod() {
    p_.configSource = api::Symbol("file");
    return *this;
  }
  PodBuilder& evictAnnotation() {
    p_.annotationEvict = true;
    return *this;
  }
  PodBuilder& preferNoEviction() {
    p_.annotationPreferNoEviction = true;
    return *this;
  }
  PodBuilder& startTime(api::Timestamp t) {
    p_.startTime = t;
    return *this;
  }
  PodBuilder& noStartTime() {
    p_.startTime.reset();
    return *this;
  }
  PodBuilder& created(api::Timestamp t) {
    p_.creationTimestamp = t;
    return *this;
  }
  PodBuilder& noCreationTimestamp() {
    p_.creationTimestamp.reset();
    return *this;
  }
  // Images of the regular containers, in order: image() appends one, images() replaces the list.
  PodBuilder& image(std::string_view i) {
    images_.emplace_back(i);
    return *this;
  }
  PodBuilder& images(std::vector<std::string> list) {
    images_.clear();
    for (const auto& i : list) images_.emplace_back(i);
    return *this;
  }
  PodBuilder& statusReason(std::string_view r) {
    s_.reason = api::Symbol(r);
    return *this;
  }
  // Container statuses: restarts(), initStatus() and ephemeralStatus() each start a new status;
  // waitingReason(), terminatedReason() and exitCode() change the one started last (or start a
  // regular one when there is none).
  PodBuilder& restarts(std::int32_t n) { return addStatus(api::ContainerKind::Regular, n); }
  PodBuilder& initStatus(std::int32_t restarts = 0) { return addStatus(api::ContainerKind::Init, restarts); }
  PodBuilder& ephemeralStatus(std::int32_t restarts = 0) { return addStatus(api::ContainerKind::Ephemeral, restarts); }
  PodBuilder& waitingReason(std::string_view r) {
    lastStatus().waitingReason = api::Symbol(r);
    return *this;
  }
  PodBuilder& terminatedReason(std::string_view r, std::int32_t exitCode = 1) {
    lastStatus().terminatedReason = api::Symbol(r);
    lastStatus().exitCode = exitCode;
    return *this;
  }
  PodBuilder& exitCode(std::int32_t code) {
    lastStatus().exitCode = code;
    return *this;
  }
  // A status condition; replaces `ready` when the type is Ready, as the decoder does.
  PodBuilder& condition(std::string_view type, std::string_view status, std::string_view reason = "",
                        std::optional<api::Timestamp> lastTransition = std::nullopt) {
    s_.conditions.emplace_back(type, status, reason, lastTransition);
    if (type == "Ready") p_.ready = status == "True";
    return *this;
  }
  // spec.schedulingGates non-empty.
  PodBuilder& gated() {
    p_.schedulingGated = true;
    return *this;
  }
  // status.nominatedNodeName.
  PodBuilder& nominated(std::string_view n) {
    s_.nominatedNodeName = api::Symbol(n);
    return *this;
  }
  PodBuilder& nodeSelector(std::string k, std::string v) {
    c_.nodeSelector.emplace_back(std::move(k), std::move(v));
    return *this;
  }
  PodBuilder& requiredNodeAffinity(std::string key, api::NodeSelectorOp op, std::vector<std::string> values) {
    if (!c_.nodeAffinity) c_.nodeAffinity.emplace();
    if (!c_.nodeAffinity->required) c_.nodeAffinity->required.emplace();
    api::NodeSelectorTerm t;
    t.matchExpressions.push_back({std::move(key), op, std::move(values)});
    c_.nodeAffinity->required->terms.push_back(std::move(t));
    return *this;
  }
  PodBuilder& preferredNodeAffinity(std::int32_t weight, std::string key, std::vector<std::string> values) {
    if (!c_.nodeAffinity) c_.nodeAffinity.emplace();
    api::PreferredSchedulingTerm t;
    t.weight = weight;
    t.preference.matchExpressions.push_back({std::move(key), api::NodeSelectorOp::In, std::move(values)});
    c_.nodeAffinity->preferred.push_back(std::move(t));
    return *this;
  }
  // A required anti-affinity term selecting pods with label k=v in `topologyKey` domains.
  PodBuilder& antiAffinity(std::string k, std::string v, std::string topologyKey = "kubernetes.io/hostname",
                           std::vector<std::string> namespaces = {}) {
    if (!c_.podAntiAffinity) c_.podAntiAffinity.emplace();
    api::PodAffinityTerm t;
    t.labelSelector = api::LabelSelector{{{std::move(k), std::move(v)}}, {}};
    t.topologyKey = std::move(topologyKey);
    t.namespaces = std::move(namespaces);
    c_.podAntiAffinity->required.push_back(std::move(t));
    return *this;
  }
  PodBuilder& antiAffinityTerm(api::PodAffinityTerm t) {
    if (!c_.podAntiAffinity) c_.podAntiAffinity.emplace();
    c_.podAntiAffinity->required.push_back(std::move(t));
    return *this;
  }
  PodBuilder& toleration(api::Toleration t) {
    c_.tolerations.push_back(std::move(t));
    return *this;
  }
  PodBuilder& spread(api::TopologySpreadConstraint t) {
    c_.topologySpreadConstraints.push_back(std::move(t));
    return *this;
  }
  std::shared_ptr<const api::Pod> build() const {
    api::Pod p = p_;
    api::SchedulingConstraints c = c_;
    std::sort(c.nodeSelector.begin(), c.nodeSelector.end());
    p.scheduling = std::make_shared<const api::SchedulingConstraints>(std::move(c));
    if (!images_.empty()) p.images = api::internImages(images_);
    if (!s_.empty()) p.statusDetail = std::make_shared<const api::PodStatusDetail>(s_);
    return std::make_shared<const api::Pod>(std::move(p));
  }

 private:
  PodBuilder& addStatus(api::ContainerKind kind, std::int32_t restarts) {
    api::ContainerStatus& cs = s_.containers.emplace_back();
    cs.kind = kind;
    cs.restartCount = restarts;
    return *this;
  }
  api::ContainerStatus& lastStatus() {
    if (s_.containers.empty()) addStatus(api::ContainerKind::Regular, 0);
    return s_.containers.back();
  }

  api::Pod p_;
  api::SchedulingConstraints c_;
  api::ImageList images_;
  api::PodStatusDetail s_;
};

inline std::shared_ptr<const api::PodDisruptionBudget> pdb(std::string name, std::string ns,
                                                           api::LabelSelector selector,
                                                           std::optional<std::int32_t> disruptionsAllowed,
                                                           std::optional<api::IntOrPercent> minAvailable = {}) {
  api::PodDisruptionBudget b;
  b.name = std::move(name);
  b.ns = api::Symbol(ns);
  b.selector = std::move(selector);
  b.minAvailable = minAvailable;
  b.generation = 1;
  if (disruptionsAllowed) {
    b.hasStatus = true;
    b.observedGeneration = 1;
    b.disruptionsAllowed = disruptionsAllowed;
  }
  return std::make_shared<const api::PodDisruptionBudget>(std::move(b));
}

inline api::LabelSelector selectorOf(std::string k, std::string v) {
  return api::LabelSelector{{{std::move(k), std::move(v)}}, {}};
}

// A store holding the given objects.
struct ClusterBuilder {
  cluster::Store store;
  ClusterBuilder& add(std::shared_ptr<const api::Pod> p) {
    store.upsert(std::move(p));
    return *this;
  }
  ClusterBuilder& add(std::shared_ptr<const api::Node> n) {
    store.upsert(std::move(n));
    return *this;
  }
  ClusterBuilder& add(std::shared_ptr<const api::PodDisruptionBudget> b) {
    store.upsert(std::move(b));
    return *this;
  }
  ClusterBuilder& add(std::shared_ptr<const api::Namespace> n) {
    store.upsert(std::move(n));
    return *this;
  }
  ClusterBuilder& add(std::shared_ptr<const api::PersistentVolumeClaim> n) {
    store.upsert(std::move(n));
    return *this;
  }
  ClusterBuilder& add(std::shared_ptr<const api::PriorityClass> n) {
    store.upsert(std::move(n));
    return *this;
  }
  cluster::SnapshotPtr snapshot() const { return store.snapshot(); }
};

}  // namespace kdesched::testing
