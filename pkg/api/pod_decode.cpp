// Decoding a Pod from JSON: metadata, the spec's scheduling constraints and container resources,
// the status fields decisions read; the derived fields (requests as the scheduler computes them,
// QoS, PVC names) are computed once the whole object has been read (pod_parts.h, shared with the
// protobuf decoder, pod_proto.cpp).
#include <algorithm>
#include <string>
#include <vector>

#include "pkg/api/detail/json_reader.h"
#include "pkg/api/detail/ondemand.h"
#include "pkg/api/detail/pod_parts.h"

namespace kdesched::api {

// The JSON reader is this file's vocabulary: every line below uses it.
using namespace detail;  // NOLINT(google-build-using-namespace)

namespace {

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

// tolerationOp (pod_parts.h): an operator this build does not know is Unknown, not an error.
Status readTolerationOp(Ctx& c, od::value& v, TolerationOp& out) {
  std::string_view s;
  KD_TRY(readString(c, v, s));
  out = tolerationOp(s);
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
  defaultRequestsFromLimits(out);
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
    if (key == "resources") {  // pod-level resources
      bool null = false;
      KD_TRY(isNull(c, f, null));
      if (null) {
        parts.podLevel.reset();
        return Status::ok();
      }
      ContainerResources& r = parts.podLevel.emplace();
      return forEachField(c, f, [&](std::string_view k, od::value& x) -> Status {
        if (k == "requests") return readResourceList(c, x, r.requests);
        if (k == "limits") return readResourceList(c, x, r.limits);
        return Status::ok();
      });
    }
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
    if (key == "schedulingGates") {
      std::size_t n = 0;
      KD_TRY(forEachElement(c, f, [&](od::value&) {
        ++n;
        return Status::ok();
      }));
      pod.schedulingGated = n > 0;
    }
    return Status::ok();
  });
}

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
      pod.phase = podPhase(phase.value_or(std::string_view()));
      return Status::ok();
    }
    if (key == "qosClass") {
      std::string_view qos;
      KD_TRY(readString(c, f, qos));
      if (auto q = qosClass(qos)) {
        pod.qos = *q;
        parts.qosFromStatus = true;
      }
      return Status::ok();
    }
    if (key == "conditions") return decodePodConditions(c, f, pod, parts.status.conditions);
    if (key == "startTime") return readTimestamp(c, f, pod.startTime);
    if (key == "reason") return readSymbol(c, f, parts.status.reason);
    if (key == "nominatedNodeName") return readSymbol(c, f, parts.status.nominatedNodeName);
    if (key == "containerStatuses")
      return decodeContainerStatuses(c, f, ContainerKind::Regular, parts.status.containers, &parts.containerResize);
    if (key == "initContainerStatuses")
      return decodeContainerStatuses(c, f, ContainerKind::Init, parts.status.containers, &parts.initContainerResize);
    if (key == "ephemeralContainerStatuses")
      return decodeContainerStatuses(c, f, ContainerKind::Ephemeral, parts.status.containers, nullptr);
    return Status::ok();
  });
}

}  // namespace

Status decodePod(od::object obj, Pod& out) {
  return guarded([&]() -> Status {
    resetPod(out);
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
    finishPod(out, parts);
    return Status::ok();
  });
}

}  // namespace kdesched::api
