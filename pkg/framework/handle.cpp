#include "pkg/framework/plugin.h"

#include <algorithm>

namespace kdesched::framework {
namespace {

void explainFilter(Explainer& e, const api::Pod& pod, const Handle& h, const FilterResult& r, const char* kind) {
  e.record(pod, {h.profile(), h.plugin(), ExplainOutcome::Refused, r.by, kind, r.reason});
}

}  // namespace

std::vector<const api::Pod*> Handle::podsOnNode(const api::Node& node, PodPhases phases) const {
  std::vector<const api::Pod*> out;
  for (const api::Pod* p : snapshot_.podsOnNode(node.nameSym)) {
    if (state_.isEvicted(*p)) continue;
    if (phases == PodPhases::NonTerminal && p->isTerminal()) continue;
    out.push_back(p);
  }
  return out;
}

std::vector<const api::Pod*> Handle::candidatesOnNode(const api::Node& node, PodPhases phases) const {
  if (!scope_) return podsOnNode(node, phases);
  std::vector<const api::Pod*> out;
  auto keep = [&](const api::Pod* p) {
    return !state_.isEvicted(*p) && (phases == PodPhases::All || !p->isTerminal());
  };
  if (scopeByNode_) {
    auto it = scopeByNode_->find(node.nameSym);
    if (it != scopeByNode_->end())
      for (const api::Pod* p : it->second)
        if (keep(p)) out.push_back(p);
    return out;
  }
  for (const api::Pod* p : snapshot_.podsOnNode(node.nameSym))
    if (keep(p) && inScope(*p)) out.push_back(p);
  return out;
}

ScopeByNode scopeByNode(const cluster::Snapshot& snapshot, const api::PodNames& scope) {
  ScopeByNode out;
  for (const api::PodName& name : scope) {
    const cluster::Snapshot::Pods pods = snapshot.podsInNamespace(name.ns);
    auto it = std::lower_bound(pods.begin(), pods.end(), name.name,
                               [](const api::Pod* p, const std::string& n) { return p->name < n; });
    if (it == pods.end() || (*it)->name != name.name || (*it)->nodeName.empty()) continue;
    out[(*it)->nodeName].push_back(*it);
  }
  for (auto& [node, pods] : out) std::sort(pods.begin(), pods.end(), cluster::podOrder);
  return out;
}

bool Handle::admit(const api::Pod& pod, const Verdict& verdict) const {
  if (!verdict.isCandidate()) {
    skip(pod, verdict.reason);
    return false;
  }
  return filter(pod).ok && preEvictionFilter(pod).ok;
}

void Handle::skip(const api::Pod& pod, const Reason& why) const {
  if (asked(pod)) explainer_->record(pod, {profile_, plugin_, ExplainOutcome::Skipped, "", "", why.text()});
}

void Handle::skipPodsOn(const api::Node& node, const Reason& why) const {
  if (!explainer_) return;
  skipEach(snapshot_.podsOnNode(node.nameSym), why);
}

FilterResult Handle::filter(const api::Pod& pod) const {
  if (!evictor_) return FilterResult::pass();
  FilterResult r = evictor_->filter(pod, *this);
  if (!r.ok && asked(pod)) explainFilter(*explainer_, pod, *this, r, "Filter");
  return r;
}

FilterResult Handle::preEvictionFilter(const api::Pod& pod) const {
  if (!evictor_) return FilterResult::pass();
  FilterResult r = evictor_->preEvictionFilter(pod, *this);
  if (!r.ok && asked(pod)) explainFilter(*explainer_, pod, *this, r, "PreEvictionFilter");
  return r;
}

EvictResult Handle::evict(const api::Pod& pod, const Reason& why) const {
  if (!evictor_) return EvictResult::refused(Refusal::Filter, "handle", "no evictor in this context");
  const std::string reason = why.text();
  EvictResult r = evictor_->evict(pod, reason, *this);
  if (asked(pod)) {
    const std::string noMove = r.noMove.empty() ? "" : "; no move: " + r.noMove;
    if (r.evicted && !r.move.empty())
      explainer_->record(pod, {profile_, plugin_, ExplainOutcome::Moved, r.by, "", reason + "; moved by " + r.move});
    else if (r.evicted)
      explainer_->record(pod, {profile_, plugin_, ExplainOutcome::Evicted, "", "", reason + noMove});
    else
      explainer_->record(pod, {profile_, plugin_, ExplainOutcome::Refused, r.by, std::string(toString(r.refusal)),
                               r.detail + noMove + " (wanted: " + reason + ")"});
  }
  return r;
}

EvictResult Handle::admitsAll(const std::vector<const api::Pod*>& pods) const {
  if (!evictor_) return EvictResult::refused(Refusal::Filter, "handle", "no evictor in this context");
  return evictor_->admitsAll(pods, *this);
}

void Handle::helped(const api::Pod& pod, const Reason& why) const {
  if (asked(pod)) explainer_->record(pod, {profile_, plugin_, ExplainOutcome::Helped, "", "", why.text()});
}

}  // namespace kdesched::framework

namespace kdesched::framework {

void CycleState::markEvicted(const api::Pod& pod) {
  evictedThisRun_.insert(&pod);
  if (!evicted_.insert(&pod).second) return;
  // Upstream's informer still lists an evicted pod, and its requests still count.
  if (!compat_.evictedEarlierGone) return;
  auto it = usage_.find(pod.nodeName);
  if (it == usage_.end()) return;
  for (const auto& [res, amount] : pod.requests) it->second.add(res, -amount);
  it->second.add(api::kPods(), -1000);
}

const std::vector<const api::Node*>* CycleState::cachedNodes(const void* owner, const cluster::Snapshot& s) const {
  auto it = nodeLists_.find({owner, &s});
  return it == nodeLists_.end() ? nullptr : &it->second;
}

const std::vector<const api::Node*>& CycleState::cacheNodes(const void* owner, const cluster::Snapshot& s,
                                                            std::vector<const api::Node*> nodes) {
  return nodeLists_[{owner, &s}] = std::move(nodes);
}

const api::ResourceList* CycleState::cachedUsage(const api::Symbol& node) const {
  auto it = usage_.find(node);
  return it == usage_.end() ? nullptr : &it->second;
}

void CycleState::cacheUsage(const api::Symbol& node, api::ResourceList usage) {
  usage_.insert_or_assign(node, std::move(usage));
}

}  // namespace kdesched::framework
