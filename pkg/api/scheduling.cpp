#include "pkg/api/scheduling.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

namespace kdesched::api {

// --- node selection ---------------------------------------------------------------------------

namespace {

bool contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// Whether labels.NewRequirement would accept the requirement. The scheduler builds its selector
// with it and a term holding a rejected requirement matches no node, so this must be checked
// before evaluating (e.g. "Gt" with value "-1": not a valid label value, so never matches).
bool isWellFormed(const NodeSelectorRequirement& r) {
  if (!isValidLabelKey(r.key)) return false;
  switch (r.op) {
    case NodeSelectorOp::In:
    case NodeSelectorOp::NotIn:
      if (r.values.empty()) return false;
      break;
    case NodeSelectorOp::Exists:
    case NodeSelectorOp::DoesNotExist:
      if (!r.values.empty()) return false;
      break;
    case NodeSelectorOp::Gt:
    case NodeSelectorOp::Lt:
      if (r.values.size() != 1 || !parseLabelInt64(r.values.front())) return false;
      break;
  }
  return std::all_of(r.values.begin(), r.values.end(), [](const std::string& v) { return isValidLabelValue(v); });
}

bool evaluate(const NodeSelectorRequirement& r, const std::optional<std::string_view>& got) {
  switch (r.op) {
    case NodeSelectorOp::In: return got && contains(r.values, *got);
    case NodeSelectorOp::NotIn: return !got || !contains(r.values, *got);
    case NodeSelectorOp::Exists: return got.has_value();
    case NodeSelectorOp::DoesNotExist: return !got;
    case NodeSelectorOp::Gt:
    case NodeSelectorOp::Lt: {
      if (!got) return false;
      const auto have = parseLabelInt64(*got);
      const auto want = parseLabelInt64(r.values.front());
      if (!have || !want) return false;
      return r.op == NodeSelectorOp::Gt ? *have > *want : *have < *want;
    }
  }
  return false;
}

// A matchFields requirement (nodeSelectorRequirementsAsFieldSelector): only In/NotIn with exactly
// one value form a field selector; anything else makes the term unusable. The only field a node
// exposes is metadata.name; other fields read as "" like fields.Set.Get does.
bool fieldRequirementMatches(const NodeSelectorRequirement& r, const Node& node) {
  if ((r.op != NodeSelectorOp::In && r.op != NodeSelectorOp::NotIn) || r.values.size() != 1) return false;
  const std::string_view field = r.key == "metadata.name" ? std::string_view(node.name) : std::string_view();
  const bool equal = field == r.values.front();
  return r.op == NodeSelectorOp::In ? equal : !equal;
}

}  // namespace

bool matchesNodeSelectorRequirement(const NodeSelectorRequirement& r, const Labels& labels) {
  return isWellFormed(r) && evaluate(r, labels.get(r.key));
}

bool matchesNodeSelectorTerm(const NodeSelectorTerm& t, const Node& node) {
  if (t.matchExpressions.empty() && t.matchFields.empty()) return false;
  for (const auto& r : t.matchExpressions) {
    if (!matchesNodeSelectorRequirement(r, node.labels)) return false;
  }
  // A malformed field requirement spoils the term even when the node has no name to compare.
  for (const auto& r : t.matchFields) {
    if ((r.op != NodeSelectorOp::In && r.op != NodeSelectorOp::NotIn) || r.values.size() != 1) return false;
  }
  // Upstream only applies field selectors when the node has fields (a non-empty name).
  if (node.name.empty()) return true;
  return std::all_of(t.matchFields.begin(), t.matchFields.end(),
                     [&](const NodeSelectorRequirement& r) { return fieldRequirementMatches(r, node); });
}

bool matchesNodeSelector(const NodeSelector& s, const Node& node) {
  return std::any_of(s.terms.begin(), s.terms.end(),
                     [&](const NodeSelectorTerm& t) { return matchesNodeSelectorTerm(t, node); });
}

bool podMatchesNodeSelectorAndAffinity(const SchedulingConstraints& c, const Node& node) {
  for (const auto& [k, v] : c.nodeSelector) {
    const auto got = node.labels.get(k);
    if (!got || *got != v) return false;
  }
  if (c.nodeAffinity && c.nodeAffinity->required) return matchesNodeSelector(*c.nodeAffinity->required, node);
  return true;
}

bool podMatchesNodeSelectorAndAffinity(const Pod& pod, const Node& node) {
  return podMatchesNodeSelectorAndAffinity(pod.constraints(), node);
}

std::int64_t preferredNodeAffinityScore(const Pod& pod, const Node& node) {
  const auto& affinity = pod.constraints().nodeAffinity;
  if (!affinity) return 0;
  std::int64_t score = 0;
  for (const auto& term : affinity->preferred) {
    if (term.weight != 0 && matchesNodeSelectorTerm(term.preference, node)) score += term.weight;
  }
  return score;
}

// --- taints and tolerations -------------------------------------------------------------------

namespace {

// content.IsDecimalInteger then strconv.ParseInt, as compareNumericValues reads both values:
// "0", or an optional '-' and digits not starting with 0. "01", "+1", "-0" and "" are not
// integers there, and a value out of int64 range is none either.
std::optional<std::int64_t> parseDecimalInteger(std::string_view s) {
  const std::string_view digits = !s.empty() && s.front() == '-' ? s.substr(1) : s;
  if (digits.empty() || (digits.front() == '0' && s.size() != 1)) return std::nullopt;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

// v1.Toleration.ToleratesTaint with enableComparisonOperators, as upstream v0.36 calls it. Note
// an empty key with operator Equal is not "match all": it still compares values, so it tolerates
// exactly the taints whose value is empty.
bool toleratesTaint(const Toleration& t, const Taint& taint) {
  if (t.effect != TaintEffect::None && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  switch (t.op) {
    case TolerationOp::Exists: return true;
    case TolerationOp::Equal: return t.value == taint.value;
    case TolerationOp::Gt:
    case TolerationOp::Lt: {
      const auto tolerated = parseDecimalInteger(t.value);
      const auto tainted = parseDecimalInteger(taint.value);
      if (!tolerated || !tainted) return false;
      return t.op == TolerationOp::Gt ? *tainted > *tolerated : *tainted < *tolerated;
    }
    case TolerationOp::Unknown: return false;
  }
  return false;
}

bool toleratesTaint(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return toleratesTaint(t, taint); });
}

bool toleratesTaints(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints,
                     const std::function<bool(const Taint&)>& filter) {
  for (const auto& taint : taints) {
    if (filter && !filter(taint)) continue;
    if (!toleratesTaint(tolerations, taint)) return false;
  }
  return true;
}

bool toleratesNoScheduleNoExecute(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints) {
  for (const auto& taint : taints) {
    if (taint.effect != TaintEffect::NoSchedule && taint.effect != TaintEffect::NoExecute) continue;
    if (!toleratesTaint(tolerations, taint)) return false;
  }
  return true;
}

// --- pod requests and QoS ---------------------------------------------------------------------

namespace {

// The resources a request may be set below the limit of (overcommit): cpu and memory. Hugepages
// must be requested as limited.
bool overcommitAllowed(const Symbol& name) { return name == kCpu() || name == kMemory(); }

}  // namespace

bool isPodLevelResource(const Symbol& name) { return overcommitAllowed(name) || name.view().starts_with("hugepages-"); }

void defaultPodLevelRequests(ContainerResources& podLevel, const std::vector<ContainerResources>& containers,
                             const std::vector<ContainerResources>& initContainers) {
  if (podLevel.limits.empty()) return;
  // The containers' sum first, for the resources that may be overcommitted; then the limit.
  const ResourceList aggregate = computePodRequests(containers, initContainers, ResourceList{});
  for (const auto& [name, milli] : aggregate)
    if (overcommitAllowed(name) && !podLevel.requests.has(name)) podLevel.requests.set(name, milli);
  for (const auto& [name, milli] : podLevel.limits)
    if (isPodLevelResource(name) && !podLevel.requests.has(name)) podLevel.requests.set(name, milli);
}

ResourceList computePodRequests(const std::vector<ContainerResources>& containers,
                                const std::vector<ContainerResources>& initContainers, const ResourceList& overhead,
                                const ResourceList* podLevelRequests) {
  ResourceList reqs;
  for (const auto& c : containers) reqs.addAll(c.requests);

  // While init container i runs, the sidecars started before it keep running, so its footprint is
  // its own request plus theirs. A sidecar's own entry is the running total of sidecars so far.
  ResourceList sidecars;
  ResourceList initPeak;
  for (const auto& c : initContainers) {
    if (c.restartableInit) {
      reqs.addAll(c.requests);
      sidecars.addAll(c.requests);
      initPeak.maxWith(sidecars);
    } else {
      ResourceList during = c.requests;
      during.addAll(sidecars);
      initPeak.maxWith(during);
    }
  }
  reqs.maxWith(initPeak);
  if (podLevelRequests)
    for (const auto& [name, milli] : *podLevelRequests)
      if (isPodLevelResource(name)) reqs.set(name, milli);
  reqs.addAll(overhead);
  return reqs;
}

ResourceList effectiveResizeRequests(const ResourceList& spec, const ResourceList& actuated,
                                     const ResourceList& allocated, bool resizeInfeasible) {
  ResourceList out = resizeInfeasible ? ResourceList{} : spec;
  out.maxWith(actuated);
  out.maxWith(allocated);
  return out;
}

bool podResizeInfeasible(const std::vector<PodCondition>& conditions) {
  for (const auto& c : conditions) {
    if (c.type() == "PodResizePending") return c.reason() == "Infeasible";
  }
  return false;
}

QosClass computePodLevelQos(const ContainerResources& podLevel) {
  // Only positive cpu and memory amounts count. Limits that do not name both cpu and memory (or
  // any limits at all, counted by every resource) rule Guaranteed out; an empty limit list does not.
  const std::int64_t rc = podLevel.requests.get(kCpu()), rm = podLevel.requests.get(kMemory());
  const std::int64_t lc = podLevel.limits.get(kCpu()), lm = podLevel.limits.get(kMemory());
  const bool hasRc = rc > 0, hasRm = rm > 0, hasLc = lc > 0, hasLm = lm > 0;
  if (!hasRc && !hasRm && !hasLc && !hasLm) return QosClass::BestEffort;
  bool guaranteed = podLevel.limits.empty() || (hasLc && hasLm);
  if (hasRc && (!hasLc || lc != rc)) guaranteed = false;
  if (hasRm && (!hasLm || lm != rm)) guaranteed = false;
  if (guaranteed && hasRc + hasRm == hasLc + hasLm) return QosClass::Guaranteed;
  return QosClass::Burstable;
}

QosClass computeQos(const std::vector<ContainerResources>& containers,
                    const std::vector<ContainerResources>& initContainers) {
  // Only cpu and memory count, and only positive amounts; requests and limits are compared as
  // pod-wide sums, exactly as qos.GetPodQOS does.
  std::int64_t reqCpu = 0, reqMem = 0, limCpu = 0, limMem = 0;
  bool hasReqCpu = false, hasReqMem = false, hasLimCpu = false, hasLimMem = false;
  bool guaranteed = true;
  auto accumulate = [](std::int64_t amount, std::int64_t& sum, bool& seen) {
    if (amount <= 0) return;
    sum = addSaturating(sum, amount);
    seen = true;
  };
  auto visit = [&](const ContainerResources& c) {
    accumulate(c.requests.get(kCpu()), reqCpu, hasReqCpu);
    accumulate(c.requests.get(kMemory()), reqMem, hasReqMem);
    const auto lc = c.limits.get(kCpu());
    const auto lm = c.limits.get(kMemory());
    accumulate(lc, limCpu, hasLimCpu);
    accumulate(lm, limMem, hasLimMem);
    if (lc <= 0 || lm <= 0) guaranteed = false;
  };
  for (const auto& c : containers) visit(c);
  for (const auto& c : initContainers) visit(c);

  if (!hasReqCpu && !hasReqMem && !hasLimCpu && !hasLimMem) return QosClass::BestEffort;
  if (guaranteed) {
    // Every request must have an equal limit, and there must be no limit without a request.
    if (hasReqCpu && (!hasLimCpu || limCpu != reqCpu)) guaranteed = false;
    if (hasReqMem && (!hasLimMem || limMem != reqMem)) guaranteed = false;
    if (hasReqCpu != hasLimCpu || hasReqMem != hasLimMem) guaranteed = false;
  }
  return guaranteed ? QosClass::Guaranteed : QosClass::Burstable;
}

// --- pod (anti-)affinity ----------------------------------------------------------------------

bool podAffinityTermMatches(const PodAffinityTerm& term, const Pod& owner, const Pod& candidate,
                            const NamespaceLabelsFn& nsLabels, const TermMatchOptions& opts) {
  // Namespaces (framework.AffinityTerm.Matches): the owner's own namespace is implied only when the
  // term lists no namespaces and has no namespaceSelector.
  const bool useSelector = term.namespaceSelector && opts.namespaceSelector;
  bool nsMatches = false;
  if (term.namespaces.empty() && !useSelector) {
    nsMatches = candidate.ns == owner.ns;
  } else {
    nsMatches = contains(term.namespaces, candidate.ns.view());
    if (!nsMatches && useSelector) {
      // An unknown namespace has no labels, like the scheduler's empty snapshot for it.
      static const Labels kNoLabels;
      const Labels* labels = nsLabels ? nsLabels(candidate.ns) : nullptr;
      nsMatches = term.namespaceSelector->matches(labels ? *labels : kNoLabels);
    }
  }
  if (!nsMatches) return false;

  // A nil labelSelector matches no pod, and matchLabelKeys cannot change that (the API server
  // only merges them into a non-nil selector).
  if (!term.labelSelector) return false;
  if (!term.labelSelector->matches(candidate.labels)) return false;
  if (!opts.matchLabelKeys) return true;
  // matchLabelKeys: key In (owner's value); mismatchLabelKeys: key NotIn (owner's value). Keys the
  // owner lacks add nothing. Merging again what the API server already merged changes nothing.
  for (const auto& key : term.matchLabelKeys) {
    const auto want = owner.labels.get(key);
    if (!want) continue;
    const auto got = candidate.labels.get(key);
    if (!got || *got != *want) return false;
  }
  for (const auto& key : term.mismatchLabelKeys) {
    const auto avoid = owner.labels.get(key);
    if (!avoid) continue;
    const auto got = candidate.labels.get(key);
    if (got && *got == *avoid) return false;
  }
  return true;
}

// --- pod helpers ------------------------------------------------------------------------------

std::optional<LabelSelector> spreadSelector(const TopologySpreadConstraint& tsc, const Labels& podLabels) {
  if (!tsc.labelSelector) return std::nullopt;
  LabelSelector sel;
  for (const auto& k : tsc.matchLabelKeys) {
    auto v = podLabels.get(k);
    if (!v) continue;
    std::pair<std::string, std::string> kv{k, std::string(*v)};
    bool dup = std::find(sel.matchLabels.begin(), sel.matchLabels.end(), kv) != sel.matchLabels.end() ||
               std::find(tsc.labelSelector->matchLabels.begin(), tsc.labelSelector->matchLabels.end(), kv) !=
                   tsc.labelSelector->matchLabels.end();
    if (!dup) sel.matchLabels.push_back(std::move(kv));
  }
  sel.matchLabels.insert(sel.matchLabels.end(), tsc.labelSelector->matchLabels.begin(),
                         tsc.labelSelector->matchLabels.end());
  sel.matchExpressions = tsc.labelSelector->matchExpressions;
  return sel;
}

bool podLessByPriorityLowToHigh(const Pod& a, const Pod& b) {
  if (a.priority.has_value() != b.priority.has_value()) return !a.priority.has_value();
  if (a.priority && *a.priority != *b.priority) return *a.priority < *b.priority;
  if (a.qos != b.qos) return static_cast<int>(a.qos) < static_cast<int>(b.qos);  // BestEffort < Burstable < Guaranteed
  return !a.annotationPreferNoEviction && b.annotationPreferNoEviction;
}

}  // namespace kdesched::api
