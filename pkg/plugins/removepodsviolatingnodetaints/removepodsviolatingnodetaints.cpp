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

// Skip: the node carries no taint the plugin considers (decided once for all its pods).
struct Untainted {
  const api::Node* node;
  std::string text() const {
    return "not a candidate: node " + node->name + " has no taint the plugin considers (" +
           std::to_string(node->taints.size()) + " taints, none with a considered effect or key)";
  }
};

// Skip: the pod tolerates each of the node's considered taints.
struct Tolerated {
  const api::Node* node;
  std::size_t considered;
  std::string text() const {
    return "not a candidate: the pod tolerates every considered taint of node " + node->name + " (" +
           std::to_string(considered) + " of " + std::to_string(node->taints.size()) + " taints considered)";
  }
};

// Candidate: a considered taint the pod does not tolerate.
struct Untolerated {
  const api::Node* node;
  const api::Taint* taint;
  std::string text() const {
    return "node " + node->name + " has taint " + describeTaint(*taint) + ", which the pod does not tolerate";
  }
};

framework::Verdict judge(const api::Pod& pod, const api::Node& node, const std::vector<const api::Taint*>& considered) {
  for (const api::Taint* t : considered)
    if (!api::toleratesTaint(pod.constraints().tolerations, *t))
      return framework::Verdict::candidate(Untolerated{&node, t});
  return framework::Verdict::skip(Tolerated{&node, considered.size()});
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
      h.skipPodsOn(*node, Untainted{node});
      continue;
    }
    for (const api::Pod* pod : h.candidatesOnNode(*node)) {
      if (h.isEvicted(*pod) || !args_.filter.admits(h, *pod)) continue;
      const framework::Verdict verdict = judge(*pod, *node, considered);
      // Upstream lists only pods passing both filters, so a pod failing them is skipped silently.
      if (!h.admit(*pod, verdict)) continue;
      framework::EvictResult res = h.evict(*pod, verdict.reason);
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
