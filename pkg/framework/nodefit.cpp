#include "pkg/framework/nodefit.h"

#include "pkg/api/scheduling.h"

namespace kdesched::framework {
namespace {

const api::Labels* namespaceLabels(const Handle& h, const api::Symbol& ns) {
  const api::Namespace* n = h.snapshot().namespaceByName(ns.view());
  return n ? &n->labels : nullptr;
}

// The non-terminal pods on a node that fit checks count: with compat evictedEarlierNotCounted:
// upstream, every one (upstream's informer still lists evicted pods), otherwise the live ones.
std::vector<const api::Pod*> podsForFit(const Handle& h, const api::Node& node) {
  if (h.state().compat().evictedEarlierGone) return h.podsOnNode(node);
  std::vector<const api::Pod*> out;
  for (const api::Pod* p : h.snapshot().podsOnNode(node.nameSym))
    if (!p->isTerminal()) out.push_back(p);
  return out;
}

// Returns the conflicting pod, or null.
const api::Pod* antiAffinityConflict(const Handle& h, const api::Pod& pod, const api::Node& node) {
  const policy::Compat& compat = h.state().compat();
  auto nsLabels = [&h](const api::Symbol& ns) { return namespaceLabels(h, ns); };
  const api::TermMatchOptions opts = termMatchOptions(compat);
  const auto& own = pod.constraints();
  for (const api::Pod* other : podsForFit(h, node)) {
    if (other->name == pod.name && (other->ns == pod.ns || !compat.podIdentityNotName)) continue;
    if (own.podAntiAffinity) {
      for (const auto& term : own.podAntiAffinity->required) {
        if (node.labels.has(term.topologyKey) && api::podAffinityTermMatches(term, pod, *other, nsLabels, opts))
          return other;
      }
    }
    const auto& theirs = other->constraints();
    if (theirs.podAntiAffinity && compat.antiAffinityBothWays) {
      for (const auto& term : theirs.podAntiAffinity->required) {
        if (node.labels.has(term.topologyKey) && api::podAffinityTermMatches(term, *other, pod, nsLabels, opts))
          return other;
      }
    }
  }
  return nullptr;
}

std::string fmt(const api::Symbol& res, std::int64_t milli) {
  return api::formatMilli(milli, res == api::kMemory() || res == api::kEphemeralStorage());
}

}  // namespace

api::TermMatchOptions termMatchOptions(const policy::Compat& compat) {
  return {.namespaceSelector = compat.namespaceSelectorHonoured, .matchLabelKeys = compat.matchLabelKeysHonoured};
}

api::ResourceList nodeRequestedResources(const Handle& h, const api::Node& node) {
  if (const api::ResourceList* cached = h.state().cachedUsage(node.nameSym)) return *cached;
  api::ResourceList used;
  std::int64_t pods = 0;
  for (const api::Pod* p : podsForFit(h, node)) {
    used.addAll(p->requests);
    ++pods;
  }
  used.set(api::kPods(), pods * 1000);
  h.state().cacheUsage(node.nameSym, used);
  return used;
}

namespace {

// `reason` builds the text only when asked for (on a loop over every node, the strings were most
// of the cost).
template <typename Reason>
FitResult notFit(bool withReason, const char* check, const Reason& reason) {
  return {false, withReason ? reason() : std::string(), check};
}

}  // namespace

FitResult staticFit(const api::Pod& pod, const api::Node& node, bool withReason) {
  if (node.unschedulable)
    return notFit(withReason, "unschedulable", [&] { return "node " + node.name + " is unschedulable"; });
  if (!api::podMatchesNodeSelectorAndAffinity(pod, node))
    return notFit(withReason, "node selector/affinity",
                  [&] { return "node " + node.name + " does not match the pod's node selector/affinity"; });
  for (const auto& taint : node.taints) {
    if (taint.effect != api::TaintEffect::NoSchedule && taint.effect != api::TaintEffect::NoExecute) continue;
    if (!api::toleratesTaint(pod.constraints().tolerations, taint))
      return notFit(withReason, "untolerated taint", [&] {
        return "node " + node.name + " has taint " + taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":" +
               std::string(api::toString(taint.effect)) + " that the pod does not tolerate";
      });
  }
  return {};
}

FitResult nodeFit(const Handle& h, const api::Pod& pod, const api::Node& node, bool withReason) {
  auto no = [&](const char* check, const auto& reason) { return notFit(withReason, check, reason); };
  if (FitResult r = staticFit(pod, node, withReason); !r.fits) return r;
  if (const api::Pod* other = antiAffinityConflict(h, pod, node))
    return no("pod anti-affinity",
              [&] { return "pod anti-affinity conflicts with pod " + other->key() + " on node " + node.name; });

  if (pod.nodeName == node.nameSym) return {};
  const api::ResourceList used = nodeRequestedResources(h, node);
  if (node.allocatable.get(api::kPods()) - used.get(api::kPods()) < 1000)
    return no("too many pods", [&] { return "node " + node.name + " has no free pod slot"; });
  // Upstream compares every resource the pod names, so a request of 0 fails on an over-committed
  // node; the scheduler skips it.
  const bool skipZero = h.state().compat().zeroRequestSkipsResource;
  for (const auto& [res, amount] : pod.requests) {
    if (amount < 0 || (amount == 0 && skipZero)) continue;
    std::int64_t available = node.allocatable.get(res) - used.get(res);
    if (amount > available) {
      FitResult r = no("", [&] {
        return "node " + node.name + " has insufficient " + res.str() + " (requested " + fmt(res, amount) +
               ", available " + fmt(res, std::max<std::int64_t>(available, 0)) + ")";
      });
      r.check = "insufficient " + res.str();
      return r;
    }
  }
  return {};
}

bool podFitsAnyOtherNode(const Handle& h, const api::Pod& pod, const std::vector<const api::Node*>& nodes) {
  for (const api::Node* n : nodes) {
    if (n->nameSym == pod.nodeName) continue;
    if (nodeFit(h, pod, *n, false).fits) return true;
  }
  return false;
}

bool podFitsAnyNode(const Handle& h, const api::Pod& pod, const std::vector<const api::Node*>& nodes) {
  for (const api::Node* n : nodes)
    if (nodeFit(h, pod, *n, false).fits) return true;
  return false;
}

}  // namespace kdesched::framework
