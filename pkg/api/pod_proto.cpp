// Decoding a Pod from protobuf: the fields pod_decode.cpp reads from JSON, by their numbers in
// k8s.io/api core/v1 and apimachinery meta/v1 generated.proto (v0.36), into the same PodParts, and
// finished by the same code (pod_parts.h). Presence follows the wire: a pointer field the API server
// leaves nil is absent, as JSON's omitted or null field is; a plain string is always written, empty
// or not, as JSON writes it unless `omitempty`.
#include "pkg/api/decode_proto.h"
#include "pkg/api/detail/pod_parts.h"
#include "pkg/api/detail/proto_reader.h"

namespace kdesched::api {

// The protobuf reader is this file's vocabulary: every line below uses it.
using namespace detail;         // NOLINT(google-build-using-namespace)
using namespace detail::proto;  // NOLINT(google-build-using-namespace)

namespace {

constexpr Fields<3> kNodeSelectorRequirement{{{1, "key"}, {2, "operator"}, {3, "values"}}};
constexpr Fields<2> kNodeSelectorTerm{{{1, "matchExpressions"}, {2, "matchFields"}}};
constexpr Fields<1> kNodeSelector{{{1, "nodeSelectorTerms"}}};
constexpr Fields<2> kAffinityTerms{
    {{1, "requiredDuringSchedulingIgnoredDuringExecution"}, {2, "preferredDuringSchedulingIgnoredDuringExecution"}}};
constexpr Fields<2> kPreferredSchedulingTerm{{{1, "weight"}, {2, "preference"}}};
constexpr Fields<2> kWeightedPodAffinityTerm{{{1, "weight"}, {2, "podAffinityTerm"}}};
constexpr Fields<6> kPodAffinityTerm{{{1, "labelSelector"},
                                      {2, "namespaces"},
                                      {3, "topologyKey"},
                                      {4, "namespaceSelector"},
                                      {5, "matchLabelKeys"},
                                      {6, "mismatchLabelKeys"}}};
constexpr Fields<3> kAffinity{{{1, "nodeAffinity"}, {2, "podAffinity"}, {3, "podAntiAffinity"}}};
constexpr Fields<5> kToleration{{{1, "key"}, {2, "operator"}, {3, "value"}, {4, "effect"}, {5, "tolerationSeconds"}}};
constexpr Fields<8> kTopologySpread{{{1, "maxSkew"},
                                     {2, "topologyKey"},
                                     {3, "whenUnsatisfiable"},
                                     {4, "labelSelector"},
                                     {5, "minDomains"},
                                     {6, "nodeAffinityPolicy"},
                                     {7, "nodeTaintsPolicy"},
                                     {8, "matchLabelKeys"}}};
constexpr Fields<4> kContainer{{{1, "name"}, {2, "image"}, {8, "resources"}, {24, "restartPolicy"}}};
constexpr Fields<2> kResources{{{1, "limits"}, {2, "requests"}}};
constexpr Fields<2> kVolume{{{1, "name"}, {2, ""}}};  // volumeSource is inlined in JSON
constexpr Fields<4> kVolumeSource{{{1, "hostPath"}, {2, "emptyDir"}, {10, "persistentVolumeClaim"}, {29, "ephemeral"}}};
constexpr Fields<1> kClaimSource{{{1, "claimName"}}};
constexpr Fields<14> kPodSpec{{{1, "volumes"},
                               {2, "containers"},
                               {7, "nodeSelector"},
                               {10, "nodeName"},
                               {18, "affinity"},
                               {20, "initContainers"},
                               {22, "tolerations"},
                               {24, "priorityClassName"},
                               {25, "priority"},
                               {32, "overhead"},
                               {33, "topologySpreadConstraints"},
                               {38, "schedulingGates"},
                               {39, "resourceClaims"},
                               {40, "resources"}}};
constexpr Fields<2> kContainerState{{{1, "waiting"}, {3, "terminated"}}};
constexpr Fields<1> kWaiting{{{1, "reason"}}};
constexpr Fields<2> kTerminated{{{1, "exitCode"}, {3, "reason"}}};
constexpr Fields<5> kContainerStatus{
    {{1, "name"}, {2, "state"}, {5, "restartCount"}, {10, "allocatedResources"}, {11, "resources"}}};
constexpr Fields<4> kPodCondition{{{1, "type"}, {2, "status"}, {4, "lastTransitionTime"}, {5, "reason"}}};
constexpr Fields<9> kPodStatus{{{1, "phase"},
                                {2, "conditions"},
                                {4, "reason"},
                                {7, "startTime"},
                                {8, "containerStatuses"},
                                {9, "qosClass"},
                                {10, "initContainerStatuses"},
                                {11, "nominatedNodeName"},
                                {13, "ephemeralContainerStatuses"}}};
constexpr Fields<8> kObjectMeta{{{1, "name"},
                                 {3, "namespace"},
                                 {5, "uid"},
                                 {8, "creationTimestamp"},
                                 {9, "deletionTimestamp"},
                                 {11, "labels"},
                                 {12, "annotations"},
                                 {13, "ownerReferences"}}};
constexpr Fields<5> kOwnerReference{{{1, "kind"}, {3, "name"}, {4, "uid"}, {5, "apiVersion"}, {6, "controller"}}};
constexpr Fields<3> kPod{{{1, "metadata"}, {2, "spec"}, {3, "status"}}};

// Selectors, affinity, tolerations and spread constraints.

Status decodeNodeSelectorRequirement(FieldPath& c, const Field& f, std::vector<NodeSelectorRequirement>& out) {
  At at(c, out.size());
  NodeSelectorRequirement r;
  bool sawOperator = false;
  KD_TRY(forEachField(c, f, kNodeSelectorRequirement, [&](const Field& x) -> Status {
    if (x.number == 1) return readString(c, x, r.key);
    if (x.number == 3) return readRepeatedString(c, x, r.values);
    sawOperator = true;
    return readEnum(c, x, kNodeSelectorOps, "operator", r.op);
  }));
  if (!sawOperator) return c.fail("missing operator");
  out.push_back(std::move(r));
  return Status::ok();
}

Status decodeNodeSelectorTerm(FieldPath& c, const Field& f, NodeSelectorTerm& out) {
  return forEachField(c, f, kNodeSelectorTerm, [&](const Field& x) {
    return decodeNodeSelectorRequirement(c, x, x.number == 1 ? out.matchExpressions : out.matchFields);
  });
}

Status decodeNodeAffinity(FieldPath& c, const Field& f, NodeAffinity& out) {
  return forEachField(c, f, kAffinityTerms, [&](const Field& x) -> Status {
    if (x.number == 1) {
      NodeSelector& sel = out.required.emplace();
      return forEachField(c, x, kNodeSelector, [&](const Field& t) {
        At at(c, sel.terms.size());
        return decodeNodeSelectorTerm(c, t, sel.terms.emplace_back());
      });
    }
    At at(c, out.preferred.size());
    PreferredSchedulingTerm& term = out.preferred.emplace_back();
    return forEachField(c, x, kPreferredSchedulingTerm, [&](const Field& e) {
      return e.number == 1 ? readInt32(c, e, term.weight) : decodeNodeSelectorTerm(c, e, term.preference);
    });
  });
}

Status decodePodAffinityTerm(FieldPath& c, const Field& f, PodAffinityTerm& out) {
  return forEachField(c, f, kPodAffinityTerm, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: return decodeLabelSelector(c, x, out.labelSelector);
      case 2: return readRepeatedString(c, x, out.namespaces);
      case 3: return readString(c, x, out.topologyKey);
      case 4: return decodeLabelSelector(c, x, out.namespaceSelector);
      case 5: return readRepeatedString(c, x, out.matchLabelKeys);
      default: return readRepeatedString(c, x, out.mismatchLabelKeys);
    }
  });
}

Status decodePodAffinity(FieldPath& c, const Field& f, PodAffinity& out) {
  return forEachField(c, f, kAffinityTerms, [&](const Field& x) -> Status {
    if (x.number == 1) {
      At at(c, out.required.size());
      return decodePodAffinityTerm(c, x, out.required.emplace_back());
    }
    At at(c, out.preferred.size());
    WeightedPodAffinityTerm& term = out.preferred.emplace_back();
    return forEachField(c, x, kWeightedPodAffinityTerm, [&](const Field& e) {
      return e.number == 1 ? readInt32(c, e, term.weight) : decodePodAffinityTerm(c, e, term.term);
    });
  });
}

Status decodeAffinity(FieldPath& c, const Field& f, SchedulingConstraints& out) {
  return forEachField(c, f, kAffinity, [&](const Field& x) -> Status {
    if (x.number == 1) return decodeNodeAffinity(c, x, out.nodeAffinity.emplace());
    return decodePodAffinity(c, x, x.number == 2 ? out.podAffinity.emplace() : out.podAntiAffinity.emplace());
  });
}

Status decodeToleration(FieldPath& c, const Field& f, Toleration& out) {
  return forEachField(c, f, kToleration, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: return readString(c, x, out.key);
      case 2: {
        std::string_view op;
        KD_TRY(readBytes(c, x, op));
        out.op = tolerationOp(op);
        return Status::ok();
      }
      case 3: return readString(c, x, out.value);
      case 4: return readEnum(c, x, kTolerationEffects, "effect", out.effect);
      default: return readOptInt(c, x, out.tolerationSeconds);
    }
  });
}

Status decodeTopologySpread(FieldPath& c, const Field& f, TopologySpreadConstraint& out) {
  return forEachField(c, f, kTopologySpread, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: return readInt32(c, x, out.maxSkew);
      case 2: return readString(c, x, out.topologyKey);
      case 3: return readEnum(c, x, kUnsatisfiableActions, "whenUnsatisfiable", out.whenUnsatisfiable);
      case 4: return decodeLabelSelector(c, x, out.labelSelector);
      case 5: return readOptInt(c, x, out.minDomains);
      case 8: return readRepeatedString(c, x, out.matchLabelKeys);
      default: {
        auto& policy = x.number == 6 ? out.nodeAffinityPolicy : out.nodeTaintsPolicy;
        return readEnum(c, x, kInclusionPolicies, "policy", policy.emplace());
      }
    }
  });
}

// Containers and volumes.

Status decodeContainer(FieldPath& c, const Field& f, bool init, ContainerResources& out, std::string_view& name,
                       ImageList& images) {
  bool restartAlways = false;
  Symbol image;
  KD_TRY(forEachField(c, f, kContainer, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: return readBytes(c, x, name);
      case 2: return readSymbol(c, x, image);
      case 8:
        return forEachField(c, x, kResources, [&](const Field& r) {
          return addResource(c, r, r.number == 1 ? out.limits : out.requests);
        });
      default: {
        std::string_view policy;
        KD_TRY(readBytes(c, x, policy));
        restartAlways = policy == "Always";
        return Status::ok();
      }
    }
  }));
  out.restartableInit = init && restartAlways;
  if (!init) images.push_back(image);
  defaultRequestsFromLimits(out);
  return Status::ok();
}

Status decodeVolume(FieldPath& c, const Field& f, Pod& pod, PodParts& parts) {
  std::string_view name;
  std::string_view claimName;
  bool ephemeral = false;
  KD_TRY(forEachField(c, f, kVolume, [&](const Field& x) -> Status {
    if (x.number == 1) return readBytes(c, x, name);
    return forEachField(c, x, kVolumeSource, [&](const Field& s) -> Status {
      if (s.type != WireType::Len) return wrongWireType(c, s, WireType::Len);
      if (s.number == 10)
        return forEachField(c, s, kClaimSource, [&](const Field& k) { return readBytes(c, k, claimName); });
      if (s.number == 29) {
        ephemeral = true;
      } else {
        pod.hasLocalStorage = true;
      }
      return Status::ok();
    });
  }));
  if (!claimName.empty()) parts.claims.emplace_back(false, claimName);
  if (ephemeral) parts.claims.emplace_back(true, name);
  return Status::ok();
}

Status decodeContainerList(FieldPath& c, const Field& f, bool init, PodParts& parts) {
  auto& list = init ? parts.initContainers : parts.containers;
  auto& names = init ? parts.initContainerNames : parts.containerNames;
  At at(c, list.size());
  return decodeContainer(c, f, init, list.emplace_back(), names.emplace_back(), parts.images);
}

Status decodePodSpec(FieldPath& c, const Field& f, Pod& pod, PodParts& parts) {
  SchedulingConstraints& sc = parts.constraints;
  std::vector<std::pair<std::string, std::string>>& nodeSelector = sc.nodeSelector;
  std::size_t volumes = 0;
  KD_TRY(forEachField(c, f, kPodSpec, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: {
        At at(c, volumes++);
        return decodeVolume(c, x, pod, parts);
      }
      case 2: return decodeContainerList(c, x, false, parts);
      case 7: return addStringPair(c, x, nodeSelector);
      case 10: return readSymbol(c, x, pod.nodeName);
      case 18: return decodeAffinity(c, x, sc);
      case 20: return decodeContainerList(c, x, true, parts);
      case 22: {
        At at(c, sc.tolerations.size());
        return decodeToleration(c, x, sc.tolerations.emplace_back());
      }
      case 24: return readSymbol(c, x, pod.priorityClassName);
      case 25: return readOptInt(c, x, pod.priority);
      case 32: return addResource(c, x, parts.overhead);
      case 40: {  // pod-level resources
        ContainerResources& r = parts.podLevel.emplace();
        return forEachField(c, x, kResources,
                            [&](const Field& q) { return addResource(c, q, q.number == 1 ? r.limits : r.requests); });
      }
      case 33: {
        At at(c, sc.topologySpreadConstraints.size());
        return decodeTopologySpread(c, x, sc.topologySpreadConstraints.emplace_back());
      }
      case 38: pod.schedulingGated = true; return Status::ok();  // a repeated field present is non-empty
      default: pod.hasResourceClaims = true; return Status::ok();
    }
  }));
  sortPairs(nodeSelector);
  return Status::ok();
}

// Status.

Status decodeContainerState(FieldPath& c, const Field& f, ContainerStatus& out) {
  return forEachField(c, f, kContainerState, [&](const Field& x) -> Status {
    if (x.number == 1) {
      return forEachField(c, x, kWaiting, [&](const Field& w) { return readSymbol(c, w, out.waitingReason); });
    }
    out.exitCode = 0;  // exitCode is required in the API; a zero one may be left out
    return forEachField(c, x, kTerminated, [&](const Field& t) {
      return t.number == 1 ? readInt32(c, t, *out.exitCode) : readSymbol(c, t, out.terminatedReason);
    });
  });
}

// resize is null for ephemeral containers, which the scheduler does not count.
Status decodeContainerStatus(FieldPath& c, const Field& f, ContainerKind kind, std::size_t index,
                             std::vector<ContainerStatus>& out, std::vector<ContainerResizeStatus>* resize) {
  At at(c, index);
  ContainerStatus cs;
  cs.kind = kind;
  ContainerResizeStatus rs;
  bool reportsResources = false;
  KD_TRY(forEachField(c, f, kContainerStatus, [&](const Field& x) -> Status {
    switch (x.number) {
      case 2: return decodeContainerState(c, x, cs);
      case 5:
        KD_TRY(readInt32(c, x, cs.restartCount));
        // The API server rejects it; restarts must not turn negative.
        if (cs.restartCount < 0) return c.fail("restartCount " + std::to_string(cs.restartCount) + " is negative");
        return Status::ok();
      default: break;
    }
    if (!resize) return Status::ok();
    if (x.number == 1) return readBytes(c, x, rs.name);
    if (x.number == 10) return addResource(c, x, rs.allocated);
    reportsResources = true;
    return forEachField(c, x, kResources,
                        [&](const Field& r) { return r.number == 2 ? addResource(c, r, rs.actuated) : Status::ok(); });
  }));
  if (reportsResources) resize->push_back(std::move(rs));
  if (!cs.isDefault()) out.push_back(cs);
  return Status::ok();
}

Status decodePodCondition(FieldPath& c, const Field& f, Pod& pod, std::vector<PodCondition>& out) {
  At at(c, out.size());
  Symbol type, status, reason;
  OptionalTime lastTransition;
  KD_TRY(forEachField(c, f, kPodCondition, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: return readSymbol(c, x, type);
      case 2: return readSymbol(c, x, status);
      case 4: return readTime(c, x, lastTransition);
      default: return readSymbol(c, x, reason);
    }
  }));
  if (type.view() == "Ready") pod.ready = status.view() == "True";
  out.emplace_back(type, status, reason,
                   lastTransition ? std::optional<Timestamp>(*lastTransition) : std::optional<Timestamp>());
  return Status::ok();
}

Status decodePodStatus(FieldPath& c, const Field& f, Pod& pod, PodParts& parts) {
  std::size_t regular = 0, init = 0, ephemeral = 0;
  auto& statuses = parts.status.containers;
  return forEachField(c, f, kPodStatus, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: {
        std::string_view phase;
        KD_TRY(readBytes(c, x, phase));
        pod.phase = podPhase(phase);
        return Status::ok();
      }
      case 2: return decodePodCondition(c, x, pod, parts.status.conditions);
      case 4: return readSymbol(c, x, parts.status.reason);
      case 7: return readTime(c, x, pod.startTime);
      case 8: return decodeContainerStatus(c, x, ContainerKind::Regular, regular++, statuses, &parts.containerResize);
      case 9: {
        std::string_view qos;
        KD_TRY(readBytes(c, x, qos));
        if (auto q = qosClass(qos)) {
          pod.qos = *q;
          parts.qosFromStatus = true;
        }
        return Status::ok();
      }
      case 10: return decodeContainerStatus(c, x, ContainerKind::Init, init++, statuses, &parts.initContainerResize);
      case 11: return readSymbol(c, x, parts.status.nominatedNodeName);
      default: return decodeContainerStatus(c, x, ContainerKind::Ephemeral, ephemeral++, statuses, nullptr);
    }
  });
}

// Metadata.

Status decodeOwnerReference(FieldPath& c, const Field& f, OwnerReference& out) {
  return forEachField(c, f, kOwnerReference, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: return readSymbol(c, x, out.kind);
      case 3: return readSymbol(c, x, out.name);
      case 4: return readString(c, x, out.uid);
      case 5: return readSymbol(c, x, out.apiVersion);
      default: return readBool(c, x, out.controller);
    }
  });
}

// Only the annotations kdesched honours are kept; for the flags their presence is what counts.
Status decodePodAnnotation(FieldPath& c, const Field& f, Pod& pod) {
  std::string_view key, value;
  KD_TRY(readMapEntry(c, f, key, value));
  if (key == kAnnotationEvict) pod.annotationEvict = true;
  if (key == kAnnotationPreferNoEviction) pod.annotationPreferNoEviction = true;
  if (key == kAnnotationMirror) pod.mirror = true;
  if (key == kAnnotationConfigSource) pod.configSource = intern(value);
  return Status::ok();
}

Status decodePodMeta(FieldPath& c, const Field& f, Pod& pod) {
  std::vector<Labels::Item> labels;
  std::vector<OwnerReference> owners;
  bool sawLabels = false, sawOwners = false;
  KD_TRY(forEachField(c, f, kObjectMeta, [&](const Field& x) -> Status {
    switch (x.number) {
      case 1: return readString(c, x, pod.name);
      case 3: return readSymbol(c, x, pod.ns);
      case 5: {
        std::string_view uid;
        KD_TRY(readBytes(c, x, uid));
        pod.uid = Uid(uid);
        return Status::ok();
      }
      case 8: return readTime(c, x, pod.creationTimestamp);
      case 9: return readTime(c, x, pod.deletionTimestamp);
      case 11: {
        sawLabels = true;
        std::string_view key, value;
        KD_TRY(readMapEntry(c, x, key, value));
        labels.emplace_back(intern(key), intern(value));
        return Status::ok();
      }
      case 12: return decodePodAnnotation(c, x, pod);
      default: {
        sawOwners = true;
        At at(c, owners.size());
        return decodeOwnerReference(c, x, owners.emplace_back());
      }
    }
  }));
  if (sawLabels) pod.labels = Labels::fromUnsorted(std::move(labels));
  if (sawOwners) pod.owners = OwnerRefs(std::move(owners));
  return Status::ok();
}

}  // namespace

bool decodesProto(Kind kind) { return kind == Kind::Pod || kind == Kind::Node; }

Status decodePodProto(std::string_view message, Pod& out) {
  return guarded([&]() -> Status {
    resetPod(out);
    FieldPath c;
    PodParts parts;
    KD_TRY(forEachField(c, message, kPod, [&](const Field& x) -> Status {
      if (x.number == 1) return decodePodMeta(c, x, out);
      if (x.number == 2) return decodePodSpec(c, x, out, parts);
      return decodePodStatus(c, x, out, parts);
    }));
    finishPod(out, parts);
    return Status::ok();
  });
}

Status decodeObjectProto(Kind kind, std::string_view message, Object& out) {
  switch (kind) {
    case Kind::Pod: KD_TRY(decodePodProto(message, out.emplace<Pod>())); break;
    case Kind::Node: KD_TRY(decodeNodeProto(message, out.emplace<Node>())); break;
    default: return Status::error("cannot decode " + std::string(toString(kind)) + " from protobuf");
  }
  // Every object the API server stores has a name (decodeObject says the same of JSON).
  const bool named = std::visit([](const auto& o) { return !o.name.empty(); }, out);
  if (!named) return Status::error("metadata.name: missing; every object has a name");
  return Status::ok();
}

}  // namespace kdesched::api
