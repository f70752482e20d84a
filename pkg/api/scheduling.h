// Scheduling semantics shared by the evictor and the plugins, as kube-scheduler defines them.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"

namespace kdesched::api {

// --- node selection ---------------------------------------------------------------------------
// One requirement against a node's labels (Gt/Lt compare integers; a non-integer label fails).
bool matchesNodeSelectorRequirement(const NodeSelectorRequirement& r, const Labels& labels);
// A term: all expressions AND all fields (metadata.name) hold. An empty term matches nothing.
bool matchesNodeSelectorTerm(const NodeSelectorTerm& t, const Node& node);
// Terms ORed.
bool matchesNodeSelector(const NodeSelector& s, const Node& node);
// spec.nodeSelector AND required node affinity (k8s GetRequiredNodeAffinity().Match).
bool podMatchesNodeSelectorAndAffinity(const Pod& pod, const Node& node);
bool podMatchesNodeSelectorAndAffinity(const SchedulingConstraints& c, const Node& node);
// Sum of weights of the preferred node-affinity terms the node matches.
std::int64_t preferredNodeAffinityScore(const Pod& pod, const Node& node);

// --- taints and tolerations -------------------------------------------------------------------
bool toleratesTaint(const Toleration& t, const Taint& taint);
bool toleratesTaint(const std::vector<Toleration>& tolerations, const Taint& taint);
// True when every taint accepted by `filter` is tolerated (filter null = every taint).
bool toleratesTaints(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints,
                     const std::function<bool(const Taint&)>& filter = nullptr);
// The scheduler's TaintToleration filter: every NoSchedule and NoExecute taint tolerated.
bool toleratesNoScheduleNoExecute(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints);

// --- pod requests and QoS ---------------------------------------------------------------------
// Effective requests as kube-scheduler computes them (k8s resourcehelper.PodRequests):
//   max( sum(app containers) + sum(restartable init sidecars),
//        for each init container i in order: its request + sum(sidecars started before i) )
//   + pod overhead.
//   With pod-level resources (spec.resources), each of its requests for cpu, memory or
//   hugepages-* replaces the containers' figure before the overhead is added
//   (resourcehelper.PodRequests, as upstream's GetResourceRequestQuantity and the scheduler call it).
ResourceList computePodRequests(const std::vector<ContainerResources>& containers,
                                const std::vector<ContainerResources>& initContainers, const ResourceList& overhead,
                                const ResourceList* podLevelRequests = nullptr);
// A resource pod-level resources may set: cpu, memory, hugepages-* (IsSupportedPodLevelResource).
bool isPodLevelResource(const Symbol& name);
// SetDefaults_Pod's defaultPodRequests, for a pod with pod-level limits: a request the pod-level
// resources lack is the containers' sum (cpu and memory), else the pod-level limit. API-server
// objects carry it already; manifests read from files may not.
void defaultPodLevelRequests(ContainerResources& podLevel, const std::vector<ContainerResources>& containers,
                             const std::vector<ContainerResources>& initContainers);
// A container being resized in place counts, per resource, by the largest of its spec's requests,
// the requests the kubelet has actuated (status.resources.requests) and those it has allocated
// (status.allocatedResources): until the resize completes the node holds whichever is larger
// (k8s resourcehelper determineEffectiveRequests). When the resize is infeasible the spec's new
// amounts will never be applied, so only actuated and allocated count.
ResourceList effectiveResizeRequests(const ResourceList& spec, const ResourceList& actuated,
                                     const ResourceList& allocated, bool resizeInfeasible);
// The first PodResizePending condition has reason Infeasible (k8s resourcehelper.IsPodResizeInfeasible).
bool podResizeInfeasible(const std::vector<PodCondition>& conditions);
// QoS class from cpu/memory requests and limits (k8s qos.GetPodQOS).
// qos.ComputePodQOS for a pod with spec.resources: the pod-level requests and limits alone.
QosClass computePodLevelQos(const ContainerResources& podLevel);
QosClass computeQos(const std::vector<ContainerResources>& containers,
                    const std::vector<ContainerResources>& initContainers);

// --- pod (anti-)affinity ----------------------------------------------------------------------
// Does `term` (declared by `owner`) select `candidate` by namespace and labels? namespaces: the
// term's list plus, when namespaceSelector is set, namespaces whose labels match it (nsLabels looks
// up a namespace's labels; null function or null result = no labels known, read as no labels). The
// owner's namespace is implied only when the list is empty AND namespaceSelector is unset (an empty
// namespaceSelector selects all namespaces). A null labelSelector selects no pod.
// matchLabelKeys/mismatchLabelKeys are merged into the selector from the owner's labels.
using NamespaceLabelsFn = std::function<const Labels*(const Symbol& ns)>;
// Which fields of a term apply. Both on is kube-scheduler's reading; upstream descheduler v0.36
// ignores namespaceSelector (the owner's namespace unless `namespaces` lists some) and
// matchLabelKeys/mismatchLabelKeys (kdesched's compat switches turn them off).
struct TermMatchOptions {
  bool namespaceSelector = true;
  bool matchLabelKeys = true;
};
bool podAffinityTermMatches(const PodAffinityTerm& term, const Pod& owner, const Pod& candidate,
                            const NamespaceLabelsFn& nsLabels, const TermMatchOptions& opts = {});

// --- topology spread ------------------------------------------------------------------------
// The selector a spread constraint counts pods with, as kube-scheduler builds it: its labelSelector
// plus, for each matchLabelKeys key the pod has, key=<the pod's value>. Nullopt when the constraint
// has no labelSelector (it selects no pod).
std::optional<LabelSelector> spreadSelector(const TopologySpreadConstraint& tsc, const Labels& podLabels);

// --- pod helpers ------------------------------------------------------------------------------
// Upstream's SortPodsBasedOnPriorityLowToHigh ordering: nil priority first, then ascending
// priority; equal priority: BestEffort < Burstable < Guaranteed; then pods without the
// prefer-no-eviction annotation first. Returns true when a should come before b.
bool podLessByPriorityLowToHigh(const Pod& a, const Pod& b);

}  // namespace kdesched::api
