// Decoding a Pod: metadata, the spec's scheduling constraints and container resources, the status
// fields decisions read, and the derived fields (requests as the scheduler computes them, QoS,
// PVC names) computed once the whole object has been read.
#include <algorithm>
#include <string>
#include <vector>

#include "pkg/api/detail/json_reader.h"
#include "pkg/api/detail/ondemand.h"
#include "pkg/api/scheduling.h"

namespace kdesched::api {

// The JSON reader is this file's vocabulary: every line below uses it.
using namespace detail;  // NOLINT(google-build-using-namespace)

namespace {

constexpr std::array<std::pair<std::string_view, NodeSelectorOp>, 6> kNodeSelectorOps{{
    {"In", NodeSelectorOp::In},
    {"NotIn", NodeSelectorOp::NotIn},
    {"Exists", NodeSelectorOp::Exists},
    {"DoesNotExist", NodeSelectorOp::DoesNotExist},
    {"Gt", NodeSelectorOp::Gt},
    {"Lt", NodeSelectorOp::Lt},
}};

// An empty operator is Equal (core/v1 Toleration).
constexpr std::array<std::pair<std::string_view, TolerationOp>, 5> kTolerationOps{{
    {"", TolerationOp::Equal},
    {"Equal", TolerationOp::Equal},
    {"Exists", TolerationOp::Exists},
    {"Gt", TolerationOp::Gt},
    {"Lt", TolerationOp::Lt},
}};

// A toleration's empty effect tolerates every effect.
constexpr std::array<std::pair<std::string_view, TaintEffect>, 4> kTolerationEffects{{
    {"", TaintEffect::None},
    {"NoSchedule", TaintEffect::NoSchedule},
    {"PreferNoSchedule", TaintEffect::PreferNoSchedule},
    {"NoExecute", TaintEffect::NoExecute},
}};

constexpr std::array<std::pair<std::string_view, UnsatisfiableAction>, 2> kUnsatisfiableActions{{
    {"DoNotSchedule", UnsatisfiableAction::DoNotSchedule},
    {"ScheduleAnyway", UnsatisfiableAction::ScheduleAnyway},
}};

constexpr std::array<std::pair<std::string_view, InclusionPolicy>, 2> kInclusionPolicies{{
    {"Honor", InclusionPolicy::Honor},
    {"Ignore", InclusionPolicy::Ignore},
}};

// Selectors, affinity, tolerations and spread constraints.

Status decodeNodeSelectorRequirements(Ctx& c, od::value& v, std::vector<NodeSelectorRequirement>& out) {
  return forEachElement(c, v, [&](od::value& e) -> Status {
    NodeSelectorRequirement r;
    bool sawOperator = false;
    KD_TRY(forEachField(c, e, [&](std::string_view k, od::value& x) -> Status {
      if (k == "key") return readString(c, x, r.key);
      if (k == "values") return readStringArray(c, x, r.values);
      if (k == "operator") {
        sawOperator = true;
        return readEnum(c, x, kNodeSelectorOps, "operator", r.op);
      }
      return Status::ok();
    }));
    if (!sawOperator) return c.fail("missing operator");
    out.push_back(std::move(r));
    return Status::ok();
  });
}

Status decodeNodeSelectorTerm(Ctx& c, od::value& v, NodeSelectorTerm& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "matchExpressions") return decodeNodeSelectorRequirements(c, f, out.matchExpressions);
    if (key == "matchFields") return decodeNodeSelectorRequirements(c, f, out.matchFields);
    return Status::ok();
  });
}

Status decodeNodeAffinity(Ctx& c, od::value& v, NodeAffinity& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      bool null = false;
      KD_TRY(isNull(c, f, null));
      if (null) return Status::ok();
      NodeSelector& sel = out.required.emplace();
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k != "nodeSelectorTerms") return Status::ok();
        return forEachElement(
            c, x, [&](od::value& t) -> Status { return decodeNodeSelectorTerm(c, t, sel.terms.emplace_back()); });
      });
    }
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return forEachElement(c, f, [&](od::value& e) -> Status {
        PreferredSchedulingTerm& term = out.preferred.emplace_back();
        return forEachField(c, e, [&](std::string_view k, od::value& x) -> Status {
          if (k == "weight") return readInt(c, x, term.weight);
          if (k == "preference") return decodeNodeSelectorTerm(c, x, term.preference);
          return Status::ok();
        });
      });
    }
    return Status::ok();
  });
}

Status decodePodAffinityTerm(Ctx& c, od::value& v, PodAffinityTerm& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "labelSelector") return decodeLabelSelector(c, f, out.labelSelector);
    if (key == "namespaces") return readStringArray(c, f, out.namespaces);
    if (key == "namespaceSelector") return decodeLabelSelector(c, f, out.namespaceSelector);
    if (key == "topologyKey") return readString(c, f, out.topologyKey);
    if (key == "matchLabelKeys") return readStringArray(c, f, out.matchLabelKeys);
    if (key == "mismatchLabelKeys") return readStringArray(c, f, out.mismatchLabelKeys);
    return Status::ok();
  });
}

Status decodePodAffinity(Ctx& c, od::value& v, PodAffinity& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "requiredDuringSchedulingIgnoredDuringExecution") {
      return forEachElement(c, f,
                            [&](od::value& e) { return decodePodAffinityTerm(c, e, out.required.emplace_back()); });
    }
    if (key == "preferredDuringSchedulingIgnoredDuringExecution") {
      return forEachElement(c, f, [&](od::value& e) -> Status {
        WeightedPodAffinityTerm& term = out.preferred.emplace_back();
        return forEachField(c, e, [&](std::string_view k, od::value& x) -> Status {
          if (k == "weight") return readInt(c, x, term.weight);
          if (k == "podAffinityTerm") return decodePodAffinityTerm(c, x, term.term);
          return Status::ok();
        });
      });
    }
    return Status::ok();
  });
}

Status decodeAffinity(Ctx& c, od::value& v, SchedulingConstraints& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "nodeAffinity") return decodeOptional(c, f, out.nodeAffinity, decodeNodeAffinity);
    if (key == "podAffinity") return decodeOptional(c, f, out.podAffinity, decodePodAffinity);
    if (key == "podAntiAffinity") return decodeOptional(c, f, out.podAntiAffinity, decodePodAffinity);
    return Status::ok();
  });
}

// An operator not in kTolerationOps is Unknown, not an error: the API server accepted it, and
// refusing it would refuse the pod, and in the daemon the whole LIST page with it.
Status readTolerationOp(Ctx& c, od::value& v, TolerationOp& out) {
  std::string_view s;
  KD_TRY(readString(c, v, s));
  const auto known =
      std::find_if(kTolerationOps.begin(), kTolerationOps.end(), [&](const auto& e) { return e.first == s; });
  out = known == kTolerationOps.end() ? TolerationOp::Unknown : known->second;
  return Status::ok();
}

Status decodeToleration(Ctx& c, od::value& v, Toleration& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "key") return readString(c, f, out.key);
    if (key == "operator") return readTolerationOp(c, f, out.op);
    if (key == "value") return readString(c, f, out.value);
    if (key == "effect") return readEnum(c, f, kTolerationEffects, "effect", out.effect);
    if (key == "tolerationSeconds") return readOptInt64(c, f, out.tolerationSeconds);
    return Status::ok();
  });
}

Status decodeTopologySpread(Ctx& c, od::value& v, TopologySpreadConstraint& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "maxSkew") return readInt(c, f, out.maxSkew);
    if (key == "topologyKey") return readString(c, f, out.topologyKey);
    if (key == "whenUnsatisfiable")
      return readEnum(c, f, kUnsatisfiableActions, "whenUnsatisfiable", out.whenUnsatisfiable);
    if (key == "labelSelector") return decodeLabelSelector(c, f, out.labelSelector);
    if (key == "minDomains") return readOptInt32(c, f, out.minDomains);
    if (key == "matchLabelKeys") return readStringArray(c, f, out.matchLabelKeys);
    if (key == "nodeAffinityPolicy" || key == "nodeTaintsPolicy") {
      auto& policy = key == "nodeAffinityPolicy" ? out.nodeAffinityPolicy : out.nodeTaintsPolicy;
      bool null = false;
      KD_TRY(isNull(c, f, null));
      policy.reset();
      if (null) return Status::ok();
      return readEnum(c, f, kInclusionPolicies, "policy", policy.emplace());
    }
    return Status::ok();
  });
}

// A container status that reports resources (in-place resize): the scheduler counts a resized
// container by these as well as by its spec. Matched to its container by name, which the API server
// keeps unique across a pod's containers and init containers.
struct ContainerResizeStatus {
  std::string_view name;
  ResourceList actuated;   // resources.requests
  ResourceList allocated;  // allocatedResources
};

// What the pod decoder gathers before it can compute the derived fields.
struct PodParts {
  std::vector<ContainerResources> containers;
  std::vector<ContainerResources> initContainers;
  std::vector<std::string_view> containerNames;  // parallel to containers
  std::vector<std::string_view> initContainerNames;
  std::vector<ContainerResizeStatus> containerResize;  // from containerStatuses
  std::vector<ContainerResizeStatus> initContainerResize;
  ResourceList overhead;
  // Volumes that name a PVC, in volume order: the claim name, or for an ephemeral volume its
  // volume name (the PVC is "<pod>-<volume>", and the pod name may come later in the document).
  std::vector<std::pair<bool, std::string_view>> claims;
  SchedulingConstraints constraints;
  ImageList images;  // of the regular containers, in order
  PodStatusDetail status;
  bool qosFromStatus = false;
};

Status decodeContainer(Ctx& c, od::value& v, bool init, ContainerResources& out, std::string_view& name,
                       ImageList& images) {
  bool restartAlways = false;
  Symbol image;
  KD_TRY(forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "name") return readString(c, f, name);
    if (key == "image") return readSymbol(c, f, image);
    if (key == "resources") {
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k == "requests") return readResourceList(c, x, out.requests);
        if (k == "limits") return readResourceList(c, x, out.limits);
        return Status::ok();
      });
    }
    if (key == "restartPolicy") {
      std::string_view policy;
      KD_TRY(readString(c, f, policy));
      restartAlways = policy == "Always";
    }
    return Status::ok();
  }));
  out.restartableInit = init && restartAlways;
  if (!init) images.push_back(image);
  // SetDefaults_Pod: a limit without a request makes the request equal to the limit (per
  // resource). API-server objects already carry it; manifests read from files may not.
  for (const auto& [name, milli] : out.limits) {
    if (!out.requests.has(name)) out.requests.set(name, milli);
  }
  return Status::ok();
}

Status decodeVolume(Ctx& c, od::value& v, Pod& pod, PodParts& parts) {
  std::string_view name;
  std::string_view claimName;
  bool ephemeral = false;
  KD_TRY(forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "name") return readString(c, f, name);
    if (key == "emptyDir" || key == "hostPath" || key == "ephemeral") {
      bool null = false;
      KD_TRY(isNull(c, f, null));
      if (null) return Status::ok();
      if (key == "ephemeral") {
        ephemeral = true;
      } else {
        pod.hasLocalStorage = true;
      }
      return Status::ok();
    }
    if (key == "persistentVolumeClaim") {
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k == "claimName") return readString(c, x, claimName);
        return Status::ok();
      });
    }
    return Status::ok();
  }));
  if (!claimName.empty()) parts.claims.emplace_back(false, claimName);
  if (ephemeral) parts.claims.emplace_back(true, name);
  return Status::ok();
}

Status decodePodSpec(Ctx& c, od::value& v, Pod& pod, PodParts& parts) {
  SchedulingConstraints& sc = parts.constraints;
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "nodeName") return readSymbol(c, f, pod.nodeName);
    if (key == "priority") return readOptInt32(c, f, pod.priority);
    if (key == "priorityClassName") return readSymbol(c, f, pod.priorityClassName);
    if (key == "nodeSelector") return readStringPairs(c, f, sc.nodeSelector);
    if (key == "affinity") return decodeAffinity(c, f, sc);
    if (key == "tolerations") {
      sc.tolerations.clear();
      return forEachElement(c, f, [&](od::value& e) { return decodeToleration(c, e, sc.tolerations.emplace_back()); });
    }
    if (key == "topologySpreadConstraints") {
      sc.topologySpreadConstraints.clear();
      return forEachElement(
          c, f, [&](od::value& e) { return decodeTopologySpread(c, e, sc.topologySpreadConstraints.emplace_back()); });
    }
    if (key == "containers" || key == "initContainers") {
      const bool init = key == "initContainers";
      auto& list = init ? parts.initContainers : parts.containers;
      auto& names = init ? parts.initContainerNames : parts.containerNames;
      list.clear();
      names.clear();
      if (!init) parts.images.clear();
      return forEachElement(c, f, [&](od::value& e) {
        return decodeContainer(c, e, init, list.emplace_back(), names.emplace_back(), parts.images);
      });
    }
    if (key == "overhead") return readResourceList(c, f, parts.overhead);
    if (key == "volumes") {
      return forEachElement(c, f, [&](od::value& e) { return decodeVolume(c, e, pod, parts); });
    }
    if (key == "resourceClaims") {
      std::size_t n = 0;
      KD_TRY(forEachElement(c, f, [&](od::value&) {
        ++n;
        return Status::ok();
      }));
      pod.hasResourceClaims = n > 0;
    }
    return Status::ok();
  });
}

constexpr std::array<std::pair<std::string_view, PodPhase>, 5> kPodPhases{{
    {"Pending", PodPhase::Pending},
    {"Running", PodPhase::Running},
    {"Succeeded", PodPhase::Succeeded},
    {"Failed", PodPhase::Failed},
    {"Unknown", PodPhase::Unknown},
}};

constexpr std::array<std::pair<std::string_view, QosClass>, 3> kQosClasses{{
    {"BestEffort", QosClass::BestEffort},
    {"Burstable", QosClass::Burstable},
    {"Guaranteed", QosClass::Guaranteed},
}};

Status decodeContainerState(Ctx& c, od::value& v, ContainerStatus& out) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "waiting") {
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k == "reason") return readSymbol(c, x, out.waitingReason);
        return Status::ok();
      });
    }
    if (key == "terminated") {
      bool null = false;
      KD_TRY(isNull(c, f, null));
      if (null) return Status::ok();
      out.exitCode = 0;  // exitCode is required in the API; a snapshot that omits it means 0
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k == "reason") return readSymbol(c, x, out.terminatedReason);
        if (k == "exitCode") return readInt(c, x, *out.exitCode);
        return Status::ok();
      });
    }
    return Status::ok();
  });
}

Status decodeContainerStatusField(Ctx& c, std::string_view key, od::value& f, ContainerStatus& cs) {
  if (key == "restartCount") {
    KD_TRY(readInt(c, f, cs.restartCount));
    // The API server rejects it; a hand-written snapshot must not turn restarts negative.
    if (cs.restartCount < 0) return c.fail("restartCount " + std::to_string(cs.restartCount) + " is negative");
    return Status::ok();
  }
  if (key == "state") return decodeContainerState(c, f, cs);
  return Status::ok();
}

// resize is null for ephemeral containers, which the scheduler does not count.
Status decodeContainerStatuses(Ctx& c, od::value& v, ContainerKind kind, std::vector<ContainerStatus>& out,
                               std::vector<ContainerResizeStatus>* resize) {
  std::erase_if(out, [&](const ContainerStatus& s) { return s.kind == kind; });
  if (resize) resize->clear();
  return forEachElement(c, v, [&](od::value& e) -> Status {
    ContainerStatus cs;
    cs.kind = kind;
    ContainerResizeStatus rs;
    bool reportsResources = false;
    KD_TRY(forEachField(c, e, [&](std::string_view key, od::value& f) -> Status {
      if (!resize) return decodeContainerStatusField(c, key, f, cs);
      if (key == "name") return readString(c, f, rs.name);
      if (key == "allocatedResources") return readResourceList(c, f, rs.allocated);
      if (key == "resources") {
        bool null = false;
        KD_TRY(isNull(c, f, null));
        reportsResources = !null;
        return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
          if (k == "requests") return readResourceList(c, x, rs.actuated);
          return Status::ok();
        });
      }
      return decodeContainerStatusField(c, key, f, cs);
    }));
    if (reportsResources) resize->push_back(std::move(rs));
    if (!cs.isDefault()) out.push_back(cs);
    return Status::ok();
  });
}

Status decodePodConditions(Ctx& c, od::value& v, Pod& pod, std::vector<PodCondition>& out) {
  out.clear();
  pod.ready = false;
  return forEachElement(c, v, [&](od::value& e) -> Status {
    Symbol type, status, reason;
    std::optional<Timestamp> lastTransition;
    KD_TRY(forEachField(c, e, [&](std::string_view key, od::value& f) -> Status {
      if (key == "type") return readSymbol(c, f, type);
      if (key == "status") return readSymbol(c, f, status);
      if (key == "reason") return readSymbol(c, f, reason);
      if (key == "lastTransitionTime") return readTimestamp(c, f, lastTransition);
      return Status::ok();
    }));
    if (type.view() == "Ready") pod.ready = status.view() == "True";
    out.emplace_back(type, status, reason, lastTransition);
    return Status::ok();
  });
}

Status decodePodStatus(Ctx& c, od::value& v, Pod& pod, PodParts& parts) {
  return forEachField(c, v, [&](std::string_view key, od::value& f) -> Status {
    if (key == "phase") {
      std::optional<std::string_view> phase;
      KD_TRY(readOptString(c, f, phase));
      // Absent means Pending (the zero value); an unrecognised phase is treated as Unknown so a
      // newer API server cannot make whole lists undecodable.
      pod.phase = PodPhase::Pending;
      if (phase && !phase->empty()) {
        pod.phase = PodPhase::Unknown;
        for (const auto& [name, value] : kPodPhases) {
          if (*phase == name) pod.phase = value;
        }
      }
      return Status::ok();
    }
    if (key == "qosClass") {
      std::string_view qos;
      KD_TRY(readString(c, f, qos));
      for (const auto& [name, value] : kQosClasses) {
        if (qos == name) {
          pod.qos = value;
          parts.qosFromStatus = true;
        }
      }
      return Status::ok();
    }
    if (key == "conditions") return decodePodConditions(c, f, pod, parts.status.conditions);
    if (key == "startTime") return readTimestamp(c, f, pod.startTime);
    if (key == "reason") return readSymbol(c, f, parts.status.reason);
    if (key == "containerStatuses")
      return decodeContainerStatuses(c, f, ContainerKind::Regular, parts.status.containers, &parts.containerResize);
    if (key == "initContainerStatuses")
      return decodeContainerStatuses(c, f, ContainerKind::Init, parts.status.containers, &parts.initContainerResize);
    if (key == "ephemeralContainerStatuses")
      return decodeContainerStatuses(c, f, ContainerKind::Ephemeral, parts.status.containers, nullptr);
    return Status::ok();
  });
}

// In-place resize, as kube-scheduler counts it (InPlacePodVerticalScaling, GA since 1.35): a
// regular container or a sidecar whose status reports resources counts by its effective requests
// (effectiveResizeRequests); a non-restartable init container always counts by its spec.
void applyResizeStatus(PodParts& parts) {
  if (parts.containerResize.empty() && parts.initContainerResize.empty()) return;
  const bool infeasible = podResizeInfeasible(parts.status.conditions);
  auto find = [&](std::string_view name) -> const ContainerResizeStatus* {
    for (const auto* list : {&parts.containerResize, &parts.initContainerResize}) {
      for (const auto& s : *list) {
        if (s.name == name) return &s;
      }
    }
    return nullptr;
  };
  auto apply = [&](std::vector<ContainerResources>& list, const std::vector<std::string_view>& names) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (&list == &parts.initContainers && !list[i].restartableInit) continue;
      if (const auto* s = find(names[i])) {
        list[i].requests = effectiveResizeRequests(list[i].requests, s->actuated, s->allocated, infeasible);
      }
    }
  };
  apply(parts.containers, parts.containerNames);
  apply(parts.initContainers, parts.initContainerNames);
}

const std::shared_ptr<const SchedulingConstraints>& noConstraints() {
  static const auto* none = new std::shared_ptr<const SchedulingConstraints>(internConstraints({}));
  return *none;
}

}  // namespace

Status decodePod(od::object obj, Pod& out) {
  return guarded([&]() -> Status {
    out = Pod{};
    out.scheduling = noConstraints();
    Ctx c;
    PodParts parts;
    MetaTargets meta;
    meta.name = &out.name;
    meta.ns = &out.ns;
    meta.uid = &out.uid;
    meta.labels = &out.labels;
    meta.annotationsOf = &out;
    meta.owners = &out.owners;
    meta.created = &out.creationTimestamp;
    meta.deleted = &out.deletionTimestamp;
    KD_TRY(forEachField(c, obj, [&](std::string_view key, od::value& v) -> Status {
      if (key == "metadata") return decodeMeta(c, v, meta);
      if (key == "spec") return decodePodSpec(c, v, out, parts);
      if (key == "status") return decodePodStatus(c, v, out, parts);
      return Status::ok();
    }));
    out.pvcClaimNames.reserve(parts.claims.size());
    for (const auto& [ephemeral, name] : parts.claims) {
      out.pvcClaimNames.push_back(ephemeral ? out.name + "-" + std::string(name) : std::string(name));
    }
    applyResizeStatus(parts);
    out.requests = computePodRequests(parts.containers, parts.initContainers, parts.overhead);
    if (!parts.qosFromStatus) out.qos = computeQos(parts.containers, parts.initContainers);
    out.scheduling = internConstraints(std::move(parts.constraints));
    if (!parts.images.empty()) out.images = internImages(std::move(parts.images));
    if (!parts.status.empty()) {
      // Kinds in API order whatever order the status lists came in, so equal statuses compare equal.
      std::stable_sort(parts.status.containers.begin(), parts.status.containers.end(),
                       [](const ContainerStatus& a, const ContainerStatus& b) { return a.kind < b.kind; });
      out.statusDetail = std::make_shared<const PodStatusDetail>(std::move(parts.status));
    }
    return Status::ok();
  });
}

}  // namespace kdesched::api
