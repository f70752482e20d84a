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

Status RemovePodsViolatingNodeAffinity::deschedule(framework::Handle& h) {
  for (const auto& type : args_.nodeAffinityType) {
    bool required = type == kRequired;
    bool stop = false;
    for (const api::Node* node : h.nodes()) {
      for (const api::Pod* pod : h.podsOnNode(*node)) {
        if (h.isEvicted(*pod) || !args_.filter.admits(h, *pod)) continue;
        if (!h.inScope(*pod)) continue;
        const auto& c = pod->constraints();
        if (!c.nodeAffinity) {
          h.passOver(*pod, "not a candidate: the pod has no node affinity");
          continue;
        }
        std::string reason;
        if (required) {
          // Cheap checks first: most pods still match their node.
          if (!c.nodeAffinity->required) {
            if (h.explaining(*pod))
              h.passOver(*pod, "not a candidate for " + type + ": the pod's node affinity has no required terms");
            continue;
          }
          if (api::podMatchesNodeSelectorAndAffinity(*pod, *node)) {
            if (h.explaining(*pod))
              h.passOver(*pod, "not a candidate: its node " + node->name + " still matches required node affinity " +
                                   describeNodeSelector(*c.nodeAffinity->required));
            continue;
          }
          if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
          if (!fitsSomeNode(h, *pod)) {
            if (h.explaining(*pod))
              h.passOver(*pod, "violates its required node affinity on " + node->name +
                                   ", but fits no other node of the cycle");
            continue;
          }
          reason = "required node affinity " + describeNodeSelector(*c.nodeAffinity->required);
          if (!c.nodeSelector.empty()) reason += " with nodeSelector " + describeNodeSelectorMap(c.nodeSelector);
          reason += " no longer matches node " + node->name;
        } else {
          if (c.nodeAffinity->preferred.empty()) {
            if (h.explaining(*pod))
              h.passOver(*pod, "not a candidate for " + type + ": the pod's node affinity has no preferred terms");
            continue;
          }
          std::int64_t current = api::preferredNodeAffinityScore(*pod, *node);
          std::int64_t best = current;
          const api::Node* bestNode = nullptr;
          for (const api::Node* n : h.nodes()) {
            std::int64_t s = api::preferredNodeAffinityScore(*pod, *n);
            if (s > best) {
              best = s;
              bestNode = n;
            }
          }
          if (!bestNode) {
            if (h.explaining(*pod))
              h.passOver(*pod, "not a candidate: preferred node affinity scores " + std::to_string(current) +
                                   " on its node " + node->name + ", no cycle node scores higher");
            continue;
          }
          if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
          if (!fitsSomeNode(h, *pod)) {
            if (h.explaining(*pod))
              h.passOver(*pod, "node " + bestNode->name + " scores higher (" + std::to_string(best) + " > " +
                                   std::to_string(current) + "), but the pod fits no other node of the cycle");
            continue;
          }
          reason = "preferred node affinity scores " + std::to_string(best) + " on node " + bestNode->name +
                   ", higher than " + std::to_string(current) + " on its node " + node->name;
        }
        framework::EvictResult res = h.evict(*pod, reason);
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
