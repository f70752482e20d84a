#include "pkg/plugins/defaultevictor/defaultevictor.h"

#include <ctime>

#include "pkg/framework/nodefit.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::defaultevictor {

using framework::FilterResult;

DefaultEvictor::DefaultEvictor(Args args, std::int32_t priorityThreshold, framework::WallSeconds now)
    : args_(std::move(args)),
      protections_(effectiveProtections(args_)),
      priorityThreshold_(priorityThreshold),
      now_(std::move(now)) {
  if (!args_.nodeSelector.empty()) {
    auto sel = api::parseLabelSelector(args_.nodeSelector);
    if (sel.isOk())
      nodeSelector_ = *sel;
    else
      badNodeSelector_ = sel.error();
  }
}

FilterResult DefaultEvictor::filter(const api::Pod& pod, const framework::Handle& h) const {
  // The evict annotation skips every check of this filter (not PreEvictionFilter, not PDBs).
  if (pod.annotationEvict) return FilterResult::pass();
  if (args_.noEvictionPolicy == "Mandatory" && pod.annotationPreferNoEviction)
    return FilterResult::fail("pod has the prefer-no-eviction annotation and noEvictionPolicy is Mandatory");
  if (pod.mirror) return FilterResult::fail("pod is a mirror pod");
  if (pod.isStatic()) return FilterResult::fail("pod is a static pod");
  if (pod.isTerminating()) return FilterResult::fail("pod is terminating");

  if (on(kSystemCriticalPods)) {
    if (pod.priority && *pod.priority >= api::kSystemCriticalPriority)
      return FilterResult::fail("pod is system-critical (priority " + std::to_string(*pod.priority) + ")");
    if (pod.priority && *pod.priority >= priorityThreshold_)
      return FilterResult::fail("pod priority " + std::to_string(*pod.priority) + " is not below the threshold " +
                                std::to_string(priorityThreshold_));
  }
  if (on(kFailedBarePods)) {
    if (pod.owners.empty()) return FilterResult::fail("pod has no owner (a bare pod would not be recreated)");
  } else if (pod.owners.empty() && pod.phase != api::PodPhase::Failed) {
    return FilterResult::fail("pod has no owner and is not Failed");
  }
  if (on(kPodsWithLocalStorage) && pod.hasLocalStorage)
    return FilterResult::fail("pod uses local storage (emptyDir or hostPath)");
  if (on(kDaemonSetPods) && pod.hasOwnerKind("DaemonSet")) return FilterResult::fail("pod is owned by a DaemonSet");
  if (on(kPodsWithPVC) && !pod.pvcClaimNames.empty()) {
    if (args_.protectedStorageClasses.empty()) return FilterResult::fail("pod uses a PersistentVolumeClaim");
    for (const auto& claim : pod.pvcClaimNames) {
      const api::PersistentVolumeClaim* pvc = h.snapshot().pvc(pod.ns, claim);
      if (!pvc || !pvc->storageClassName || pvc->storageClassName->empty())
        return FilterResult::fail("pod uses PVC " + claim + " whose storage class is unknown (protected to be safe)");
      for (const auto& sc : args_.protectedStorageClasses)
        if (*pvc->storageClassName == sc)
          return FilterResult::fail("pod uses PVC " + claim + " of protected storage class " + sc);
    }
  }
  if (on(kPodsWithoutPDB)) {
    // Upstream v0.36 reads a PDB informer it never starts, so no pod looks covered
    // (kubernetes-sigs/descheduler#1882).
    if (!h.state().compat().podsWithoutPDBProtection)
      return FilterResult::fail("pod is protected by PodsWithoutPDB (compat podsWithoutPDBProtection: upstream)");
    bool covered = false;
    for (const auto* pdb : h.snapshot().pdbsInNamespace(pod.ns))
      if (pdb->selector && pdb->selector->matches(pod.labels)) covered = true;
    if (!covered) return FilterResult::fail("pod is not covered by a PodDisruptionBudget");
  }
  if (on(kPodsWithResourceClaims) && pod.hasResourceClaims) return FilterResult::fail("pod has resource claims");

  if (args_.labelSelector && !args_.labelSelector->matches(pod.labels))
    return FilterResult::fail("pod labels do not match labelSelector " + args_.labelSelector->toString());
  if (args_.minReplicas > 1 && pod.owners.size() == 1) {
    std::size_t replicas = h.snapshot().podsOfOwner(pod.owners.front().uid).size();
    if (replicas < args_.minReplicas)
      return FilterResult::fail("owner has " + std::to_string(replicas) + " pod(s), fewer than minReplicas " +
                                std::to_string(args_.minReplicas));
  }
  if (args_.minPodAgeSeconds) {
    if (!pod.startTime) return FilterResult::fail("pod has not started (minPodAge)");
    double age = static_cast<double>(now_() - *pod.startTime);
    if (age < *args_.minPodAgeSeconds)
      return FilterResult::fail("pod is younger than minPodAge (" + std::to_string(static_cast<long long>(age)) + "s)");
  }
  return FilterResult::pass();
}

FilterResult DefaultEvictor::preEvictionFilter(const api::Pod& pod, const framework::Handle& h) const {
  if (args_.nodeFit && !badNodeSelector_.empty()) {
    // Upstream parses the selector in every PreEvictionFilter and fails it on the error, so a
    // profile with a selector that does not parse evicts nothing (the policy loaded with a warning).
    return FilterResult::fail("nodeFit: nodeSelector \"" + args_.nodeSelector +
                              "\" does not parse: " + badNodeSelector_);
  }
  if (args_.nodeFit) {
    // The ready nodes matching the selector depend on the snapshot alone: once per cycle, not per
    // candidate (5,000 nodes x 150,000 candidates made it quadratic).
    const std::vector<const api::Node*>* nodes = h.state().cachedNodes(this, h.snapshot());
    if (!nodes) {
      std::vector<const api::Node*> ready;
      for (const api::Node* n : h.snapshot().nodes())
        if (n->isReady() && (!nodeSelector_ || nodeSelector_->matches(n->labels))) ready.push_back(n);
      nodes = &h.state().cacheNodes(this, h.snapshot(), std::move(ready));
    }
    if (!framework::podFitsAnyOtherNode(h, pod, *nodes))
      return FilterResult::fail("nodeFit: the pod fits no other ready node");
  }
  if (args_.namespaceLabelSelector) {
    const api::Namespace* ns = h.snapshot().namespaceByName(pod.ns.view());
    if (!ns || !args_.namespaceLabelSelector->matches(ns->labels))
      return FilterResult::fail("namespace " + pod.ns.str() + " does not match namespaceLabelSelector");
  }
  return FilterResult::pass();
}

namespace {

// The priority threshold: the value given, the named PriorityClass's, or system-critical.
Result<std::int32_t> priorityThreshold(const Args& args, const policy::RawArgs& raw,
                                       const framework::BuildContext& ctx) {
  if (args.priorityThresholdValue) return *args.priorityThresholdValue;
  if (!args.priorityThresholdName) return api::kSystemCriticalPriority;
  if (!ctx.priorityClassValue)
    return Status::error(raw.path + ".priorityThreshold.name: no PriorityClass lookup available");
  auto v = ctx.priorityClassValue(*args.priorityThresholdName);
  if (!v.isOk()) return Status::error(raw.path + ".priorityThreshold.name: " + v.error());
  if (*v > api::kSystemCriticalPriority)
    return Status::error(raw.path + ".priorityThreshold.name: priority threshold can't be greater than 2000000000");
  return *v;
}

}  // namespace

framework::PluginRegistration registration() {
  return common::registrationOf<DefaultEvictor>(kName, decodeArgs, priorityThreshold);
}

}  // namespace kdesched::plugins::defaultevictor
