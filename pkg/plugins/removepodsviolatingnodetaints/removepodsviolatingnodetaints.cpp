#include "pkg/plugins/removepodsviolatingnodetaints/removepodsviolatingnodetaints.h"

#include "pkg/api/scheduling.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::removepodsviolatingnodetaints {

std::string describeTaint(const api::Taint& taint) {
  std::string out = taint.key;
  if (!taint.value.empty()) out += "=" + taint.value;
  return out + ":" + std::string(api::toString(taint.effect));
}

namespace {

// Pods on a node without a considered taint are not looked at one by one; asked ones still hear why.
void explainUntainted(const framework::Handle& h, const api::Node& node) {
  for (const api::Pod* pod : h.snapshot().podsOnNode(node.nameSym))
    if (h.explaining(*pod))
      h.passOver(*pod, "not a candidate: node " + node.name + " has no taint the plugin considers (" +
                           std::to_string(node.taints.size()) + " taints, none with a considered effect or key)");
}

}  // namespace

Status RemovePodsViolatingNodeTaints::deschedule(framework::Handle& h) {
  std::vector<const api::Taint*> considered;
  for (const api::Node* node : h.nodes()) {
    considered.clear();
    for (const api::Taint& t : node->taints)
      if (args_.considers(t)) considered.push_back(&t);
    // Most nodes carry no taint the plugin looks at: skip their pods altogether.
    if (considered.empty()) {
      if (h.explainingAny()) explainUntainted(h, *node);
      continue;
    }
    for (const api::Pod* pod : h.podsOnNode(*node)) {
      if (h.isEvicted(*pod) || !args_.filter.admits(h, *pod) || !h.inScope(*pod)) continue;
      const api::Taint* untolerated = nullptr;
      for (const api::Taint* t : considered) {
        if (!api::toleratesTaint(pod->constraints().tolerations, *t)) {
          untolerated = t;
          break;
        }
      }
      if (!untolerated) {
        if (h.explaining(*pod))
          h.passOver(*pod, "not a candidate: the pod tolerates every considered taint of node " + node->name + " (" +
                               std::to_string(considered.size()) + " of " + std::to_string(node->taints.size()) +
                               " taints considered)");
        continue;
      }
      // Upstream lists only pods passing both filters, so a pod failing them is skipped silently.
      if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
      framework::EvictResult res = h.evict(*pod, "node " + node->name + " has taint " + describeTaint(*untolerated) +
                                                     ", which the pod does not tolerate");
      if (res.refusal == framework::Refusal::NodeLimit) break;
      if (res.stopsPlugin()) return Status::ok();
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<RemovePodsViolatingNodeTaints>(kName, decodeArgs);
}

}  // namespace kdesched::plugins::removepodsviolatingnodetaints
