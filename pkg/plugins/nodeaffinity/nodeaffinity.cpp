#include "pkg/plugins/nodeaffinity/nodeaffinity.h"

#include "pkg/api/scheduling.h"
#include "pkg/framework/nodefit.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::nodeaffinity {
namespace {

std::string_view opName(api::NodeSelectorOp op) {
  switch (op) {
    case api::NodeSelectorOp::In: return "In";
    case api::NodeSelectorOp::NotIn: return "NotIn";
    case api::NodeSelectorOp::Exists: return "Exists";
    case api::NodeSelectorOp::DoesNotExist: return "DoesNotExist";
    case api::NodeSelectorOp::Gt: return "Gt";
    case api::NodeSelectorOp::Lt: return "Lt";
  }
  return "?";
}

std::string describeRequirements(const std::vector<api::NodeSelectorRequirement>& reqs, const std::string& prefix) {
  std::string out;
  for (const auto& r : reqs) {
    if (!out.empty()) out += " AND ";
    out += prefix + r.key + " " + std::string(opName(r.op));
    if (!r.values.empty()) {
      out += " [";
      for (std::size_t i = 0; i < r.values.size(); ++i) out += (i ? "," : "") + r.values[i];
      out += "]";
    }
  }
  return out;
}

std::string describeNodeSelectorMap(const std::vector<std::pair<std::string, std::string>>& sel) {
  std::string out;
  for (const auto& [k, v] : sel) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

// The pod fits some node of the cycle (its own included, where the selector check fails).
bool fitsSomeNode(const framework::Handle& h, const api::Pod& pod) {
  return framework::podFitsAnyNode(h, pod, h.nodes());
}

}  // namespace

std::string describeNodeSelector(const api::NodeSelector& s) {
  std::string out;
  for (std::size_t i = 0; i < s.terms.size(); ++i) {
    std::string term = describeRequirements(s.terms[i].matchExpressions, "");
    std::string fields = describeRequirements(s.terms[i].matchFields, "field ");
    if (!fields.empty()) term += (term.empty() ? "" : " AND ") + fields;
    out += (i ? " OR " : "") + ("(" + term + ")");
  }
  return out;
}

namespace {

using framework::Verdict;

struct NoTerms {  // skip: the pod's node affinity has no terms of the type the plugin checks
  const std::string* type;
  bool required;
  std::string text() const {
    return "not a candidate for " + *type + ": the pod's node affinity has no " +
           (required ? "required" : "preferred") + " terms";
  }
};

struct StillMatches {  // skip
  const api::Node* node;
  const api::NodeSelector* required;
  std::string text() const {
    return "not a candidate: its node " + node->name + " still matches required node affinity " +
           describeNodeSelector(*required);
  }
};

struct NoBetterNode {  // skip
  std::int64_t score;
  const api::Node* node;
  std::string text() const {
    return "not a candidate: preferred node affinity scores " + std::to_string(score) + " on its node " + node->name +
           ", no cycle node scores higher";
  }
};

struct RequiredViolated {  // candidate
  const api::Pod* pod;
  const api::Node* node;
  std::string text() const {
    const auto& c = pod->constraints();
    std::string out = "required node affinity " + describeNodeSelector(*c.nodeAffinity->required);
    if (!c.nodeSelector.empty()) out += " with nodeSelector " + describeNodeSelectorMap(c.nodeSelector);
    return out + " no longer matches node " + node->name;
  }
};

struct PreferredElsewhere {  // candidate
  std::int64_t best;
  const api::Node* bestNode;
  std::int64_t current;
  const api::Node* node;
  std::string text() const {
    return "preferred node affinity scores " + std::to_string(best) + " on node " + bestNode->name + ", higher than " +
           std::to_string(current) + " on its node " + node->name;
  }
};

struct FitsNoOtherNode {  // skip: a candidate by its affinity that no other node of the cycle could take
  const Verdict* candidate;
  std::string text() const {
    if (const auto* p = candidate->reason.facts<PreferredElsewhere>())
      return "node " + p->bestNode->name + " scores higher (" + std::to_string(p->best) + " > " +
             std::to_string(p->current) + "), but the pod fits no other node of the cycle";
    const auto* r = candidate->reason.facts<RequiredViolated>();
    return "violates its required node affinity on " + (r ? r->node->name : std::string("its node")) +
           ", but fits no other node of the cycle";
  }
};

Verdict judgeRequired(const api::Pod& pod, const api::Node& node, const std::string& type) {
  const auto& c = pod.constraints();
  // Cheap checks first: most pods still match their node.
  if (!c.nodeAffinity->required) return Verdict::skip(NoTerms{&type, true});
  if (api::podMatchesNodeSelectorAndAffinity(pod, node))
    return Verdict::skip(StillMatches{&node, &*c.nodeAffinity->required});
  return Verdict::candidate(RequiredViolated{&pod, &node});
}

Verdict judgePreferred(const framework::Handle& h, const api::Pod& pod, const api::Node& node,
                       const std::string& type) {
  if (pod.constraints().nodeAffinity->preferred.empty()) return Verdict::skip(NoTerms{&type, false});
  const std::int64_t current = api::preferredNodeAffinityScore(pod, node);
  std::int64_t best = current;
  const api::Node* bestNode = nullptr;
  for (const api::Node* n : h.nodes()) {
    const std::int64_t s = api::preferredNodeAffinityScore(pod, *n);
    if (s > best) {
      best = s;
      bestNode = n;
    }
  }
  if (!bestNode) return Verdict::skip(NoBetterNode{current, &node});
  return Verdict::candidate(PreferredElsewhere{best, bestNode, current, &node});
}

}  // namespace

Status RemovePodsViolatingNodeAffinity::deschedule(framework::Handle& h) {
  for (const auto& type : args_.nodeAffinityType) {
    const bool required = type == kRequired;
    for (const api::Node* node : h.nodes()) {
      bool stop = false;
      for (const api::Pod* pod : h.candidatesOnNode(*node)) {
        if (h.isEvicted(*pod) || !args_.filter.admits(h, *pod)) continue;
        if (!pod->constraints().nodeAffinity) {
          h.skip(*pod, "not a candidate: the pod has no node affinity");
          continue;
        }
        const Verdict verdict = required ? judgeRequired(*pod, *node, type) : judgePreferred(h, *pod, *node, type);
        if (!h.admit(*pod, verdict)) continue;
        if (!fitsSomeNode(h, *pod)) {
          h.skip(*pod, FitsNoOtherNode{&verdict});
          continue;
        }
        framework::EvictResult res = h.evict(*pod, verdict.reason);
        if (res.refusal == framework::Refusal::NodeLimit) break;
        if (res.stopsPlugin()) {
          stop = true;
          break;
        }
      }
      if (stop) break;
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<RemovePodsViolatingNodeAffinity>(kName, decodeArgs);
}

}  // namespace kdesched::plugins::nodeaffinity
