#include "pkg/plugins/removepodsviolatingnodetaints/removepodsviolatingnodetaints.h"

#include "pkg/api/scheduling.h"
#include "pkg/plugins/common/registration.h"

namespace kdesched::plugins::removepodsviolatingnodetaints {

std::string describeTaint(const api::Taint& taint) {
  std::string out = taint.key;
  if (!taint.value.empty()) out += "=" + taint.value;
  return out + ":" + std::string(api::toString(taint.effect));
}

Status RemovePodsViolatingNodeTaints::deschedule(framework::Handle& h) {
  std::vector<const api::Taint*> considered;
  for (const api::Node* node : h.nodes()) {
    considered.clear();
    for (const api::Taint& t : node->taints)
      if (args_.considers(t)) considered.push_back(&t);
    // Most nodes carry no taint the plugin looks at: skip their pods altogether.
    if (considered.empty()) continue;
    for (const api::Pod* pod : h.podsOnNode(*node)) {
      if (h.isEvicted(*pod) || !args_.filter.allows(*pod) || !h.inScope(*pod)) continue;
      const api::Taint* untolerated = nullptr;
      for (const api::Taint* t : considered) {
        if (!api::toleratesTaint(pod->constraints().tolerations, *t)) {
          untolerated = t;
          break;
        }
      }
      if (!untolerated) continue;
      // Upstream lists only pods passing both filters, so a pod failing them is skipped silently.
      if (!h.filter(*pod).ok || !h.preEvictionFilter(*pod).ok) continue;
      framework::EvictResult res = h.evict(*pod, "node " + node->name + " has taint " + describeTaint(*untolerated) +
                                                     ", which the pod does not tolerate");
      if (res.refusal == framework::Refusal::NodeLimit) break;
      if (res.refusal == framework::Refusal::TotalLimit) return Status::ok();
    }
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<RemovePodsViolatingNodeTaints>(kName, decodeArgs);
}

}  // namespace kdesched::plugins::removepodsviolatingnodetaints
