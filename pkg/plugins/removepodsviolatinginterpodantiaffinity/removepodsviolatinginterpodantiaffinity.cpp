#include "pkg/plugins/removepodsviolatinginterpodantiaffinity/removepodsviolatinginterpodantiaffinity.h"

#include <algorithm>
#include <unordered_set>

#include "pkg/api/scheduling.h"
#include "pkg/framework/nodefit.h"
#include "pkg/framework/selection.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity {
namespace {

struct Violation {
  const api::PodAffinityTerm* term = nullptr;
  const api::Pod* by = nullptr;
  const api::Node* on = nullptr;
};

class Evaluator {
 public:
  Evaluator(const framework::Handle& h, const Args& args) : h_(h), args_(args) {
    for (const api::Node* n : h.nodes()) cycleNodes_.insert(n->nameSym);
  }

  // The first required anti-affinity term of `pod` (on `node`) violated by another live pod in
  // the same topology domain.
  std::optional<Violation> find(const api::Pod& pod, const api::Node& node) const {
    const auto& c = pod.constraints();
    if (!c.podAntiAffinity) return std::nullopt;
    auto nsLabels = [this](const api::Symbol& ns) -> const api::Labels* {
      const api::Namespace* n = h_.snapshot().namespaceByName(ns.view());
      return n ? &n->labels : nullptr;
    };
    const policy::Compat& compat = h_.state().compat();
    const api::TermMatchOptions opts = framework::termMatchOptions(compat);
    for (const auto& term : c.podAntiAffinity->required) {
      if (!term.labelSelector) continue;  // selects no pod
      auto domain = node.labels.get(term.topologyKey);
      for (const auto& span : framework::selectorCandidates(h_.snapshot(), *term.labelSelector)) {
        for (const api::Pod* q : span) {
          if (q == &pod || q->nodeName.empty() || q->isTerminal() || h_.isEvicted(*q)) continue;
          if (q->isTerminating() && compat.terminatingNotViolator) continue;
          // Upstream tells pods apart by name only: a same-named pod elsewhere is "itself".
          if (q->name == pod.name && !compat.podIdentityNotName) continue;
          if (!args_.filter.allows(*q)) continue;  // upstream counts only the plugin's listed pods
          if (!cycleNodes_.count(q->nodeName)) continue;
          const api::Node* qNode = h_.snapshot().node(q->nodeName);
          if (!qNode) continue;
          bool sameDomain = qNode == &node;
          if (!sameDomain && domain) {
            auto qDomain = qNode->labels.get(term.topologyKey);
            sameDomain = qDomain && *qDomain == *domain;
          }
          if (!sameDomain) continue;
          if (api::podAffinityTermMatches(term, pod, *q, nsLabels, opts)) return Violation{&term, q, qNode};
        }
      }
    }
    return std::nullopt;
  }

 private:
  const framework::Handle& h_;
  const Args& args_;
  std::unordered_set<api::Symbol> cycleNodes_;
};

}  // namespace

std::string describeTerm(const api::PodAffinityTerm& term) {
  std::string out = "{labelSelector: " + (term.labelSelector ? term.labelSelector->toString() : "<none>");
  if (!term.namespaces.empty()) {
    out += ", namespaces: [";
    for (std::size_t i = 0; i < term.namespaces.size(); ++i) out += (i ? "," : "") + term.namespaces[i];
    out += "]";
  }
  if (term.namespaceSelector) out += ", namespaceSelector: " + term.namespaceSelector->toString();
  out += ", topologyKey: " + term.topologyKey + "}";
  return out;
}

namespace {

struct NoViolatedTerm {  // skip
  const api::Pod* pod;
  const api::Node* node;
  std::string text() const {
    const auto& c = pod->constraints();
    if (!c.podAntiAffinity || c.podAntiAffinity->required.empty())
      return "not a candidate: no violated term (the pod has no required podAntiAffinity term)";
    return "not a candidate: no violated term (none of its " + std::to_string(c.podAntiAffinity->required.size()) +
           " required podAntiAffinity terms matches another live pod in its domain on node " + node->name + ")";
  }
};

struct TermViolated {  // candidate
  Violation v;
  std::string text() const {
    return "required podAntiAffinity term " + describeTerm(*v.term) + " is violated by pod " + v.by->key() +
           " on node " + v.on->name;
  }
};

framework::Verdict judge(const Evaluator& eval, const api::Pod& pod, const api::Node& node) {
  if (auto v = eval.find(pod, node)) return framework::Verdict::candidate(TermViolated{*v});
  return framework::Verdict::skip(NoViolatedTerm{&pod, &node});
}

}  // namespace

Status RemovePodsViolatingInterPodAntiAffinity::deschedule(framework::Handle& h) {
  Evaluator eval(h, args_);
  for (const api::Node* node : h.nodes()) {
    std::vector<const api::Pod*> pods;
    for (const api::Pod* p : h.candidatesOnNode(*node))
      if (args_.filter.admits(h, *p)) pods.push_back(p);
    std::stable_sort(pods.begin(), pods.end(),
                     [](const api::Pod* a, const api::Pod* b) { return api::podLessByPriorityLowToHigh(*a, *b); });
    for (const api::Pod* pod : pods) {
      if (h.isEvicted(*pod)) continue;
      // A terminating pod is already leaving; upstream hands it to the evictor, whose Filter passes
      // it when it carries the evict annotation.
      if (pod->isTerminating() && h.state().compat().terminatingNotCandidate) {
        h.skip(*pod, "not a candidate: the pod is terminating (compat terminatingNotCandidate)");
        continue;
      }
      const framework::Verdict verdict = judge(eval, *pod, *node);
      if (!verdict.isCandidate()) {
        h.skip(*pod, verdict.reason);
        continue;
      }
      framework::EvictResult res = h.evict(*pod, verdict.reason);
      if (res.refusal == framework::Refusal::NodeLimit) break;
      if (res.stopsPlugin()) return Status::ok();
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<RemovePodsViolatingInterPodAntiAffinity>(kName, decodeArgs);
}

}  // namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity
