// Every field of an api::Pod (and of an api::Node) as text, one line each, in a fixed order: two pods are the same
// object exactly when their dumps are equal, and a difference shows as a line diff. For the tests that decode one pod
// two ways (JSON and protobuf) and the end-to-end comparison of a real API server's answers
// (test/e2e/wire_compare.cpp).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "pkg/api/types.h"

namespace kdesched::testing {

namespace dump_detail {

inline std::string opt(const api::OptionalTime& t) { return t ? std::to_string(*t) : "unset"; }
template <typename T>
std::string opt(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "unset";
}

inline std::string list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out + "]";
}

inline std::string selector(const std::optional<api::LabelSelector>& s) {
  if (!s) return "unset";
  std::string out = "{matchLabels:";
  for (const auto& [k, v] : s->matchLabels) out += k + "=" + v + ";";
  out += " matchExpressions:";
  for (const auto& r : s->matchExpressions)
    out += r.key + " op" + std::to_string(int(r.op)) + " " + list(r.values) + ";";
  return out + "}";
}

inline std::string requirements(const std::vector<api::NodeSelectorRequirement>& rs) {
  std::string out;
  for (const auto& r : rs) out += r.key + " op" + std::to_string(int(r.op)) + " " + list(r.values) + ";";
  return out;
}

inline std::string term(const api::NodeSelectorTerm& t) {
  return "{expr:" + requirements(t.matchExpressions) + " fields:" + requirements(t.matchFields) + "}";
}

inline std::string podTerm(const api::PodAffinityTerm& t) {
  return "{sel:" + selector(t.labelSelector) + " ns:" + list(t.namespaces) + " nsSel:" + selector(t.namespaceSelector) +
         " key:" + t.topologyKey + " match:" + list(t.matchLabelKeys) + " mismatch:" + list(t.mismatchLabelKeys) + "}";
}

inline void podAffinity(std::ostream& os, const char* what, const std::optional<api::PodAffinity>& a) {
  if (!a) {
    os << what << ": unset\n";
    return;
  }
  for (const auto& t : a->required) os << what << ".required: " << podTerm(t) << "\n";
  for (const auto& t : a->preferred) os << what << ".preferred: " << t.weight << " " << podTerm(t.term) << "\n";
  os << what << ": set\n";
}

inline void constraints(std::ostream& os, const api::SchedulingConstraints& c) {
  for (const auto& [k, v] : c.nodeSelector) os << "nodeSelector: " << k << "=" << v << "\n";
  if (c.nodeAffinity) {
    if (c.nodeAffinity->required) {
      os << "nodeAffinity.required: set\n";
      for (const auto& t : c.nodeAffinity->required->terms) os << "nodeAffinity.required.term: " << term(t) << "\n";
    }
    for (const auto& p : c.nodeAffinity->preferred)
      os << "nodeAffinity.preferred: " << p.weight << " " << term(p.preference) << "\n";
    os << "nodeAffinity: set\n";
  }
  podAffinity(os, "podAffinity", c.podAffinity);
  podAffinity(os, "podAntiAffinity", c.podAntiAffinity);
  for (const auto& t : c.tolerations) {
    os << "toleration: key=" << t.key << " op" << int(t.op) << " value=" << t.value << " effect" << int(t.effect)
       << " seconds=" << opt(t.tolerationSeconds) << "\n";
  }
  for (const auto& t : c.topologySpreadConstraints) {
    os << "spread: maxSkew=" << t.maxSkew << " key=" << t.topologyKey << " when" << int(t.whenUnsatisfiable)
       << " sel=" << selector(t.labelSelector) << " minDomains=" << opt(t.minDomains)
       << " affinityPolicy=" << (t.nodeAffinityPolicy ? std::to_string(int(*t.nodeAffinityPolicy)) : "unset")
       << " taintsPolicy=" << (t.nodeTaintsPolicy ? std::to_string(int(*t.nodeTaintsPolicy)) : "unset")
       << " match=" << list(t.matchLabelKeys) << "\n";
  }
}

}  // namespace dump_detail

inline std::string dumpPod(const api::Pod& p) {
  using namespace dump_detail;  // NOLINT(google-build-using-namespace)
  std::ostringstream os;
  os << "pod: " << p.ns.view() << "/" << p.name << "\n";
  os << "uid: " << p.uid.str() << "\n";
  os << "labels: " << p.labels.toString() << "\n";
  for (const auto& o : p.owners) {
    os << "owner: " << o.apiVersion.view() << " " << o.kind.view() << " " << o.name.view() << " " << o.uid
       << " controller=" << o.controller << "\n";
  }
  os << "nodeName: " << p.nodeName.view() << "\n";
  os << "phase: " << api::toString(p.phase) << "\n";
  os << "qos: " << api::toString(p.qos) << "\n";
  os << "priority: " << opt(p.priority) << "\n";
  os << "priorityClassName: " << p.priorityClassName.view() << "\n";
  os << "requests: " << p.requests.toString() << "\n";
  constraints(os, p.constraints());
  os << "pvcClaimNames: " << list(p.pvcClaimNames) << "\n";
  os << "creationTimestamp: " << opt(p.creationTimestamp) << "\n";
  os << "deletionTimestamp: " << opt(p.deletionTimestamp) << "\n";
  os << "startTime: " << opt(p.startTime) << "\n";
  os << "images:";
  for (const auto& i : p.containerImages()) os << " " << i.view();
  os << "\n";
  const api::PodStatusDetail& s = p.status();
  os << "status.reason: " << s.reason.view() << "\n";
  os << "status.nominatedNodeName: " << s.nominatedNodeName.view() << "\n";
  for (const auto& c : s.containers) {
    os << "containerStatus: kind" << int(c.kind) << " restarts=" << c.restartCount
       << " waiting=" << c.waitingReason.view() << " terminated=" << c.terminatedReason.view()
       << " exitCode=" << opt(c.exitCode) << "\n";
  }
  for (const auto& c : s.conditions) {
    os << "condition: " << c.type() << "=" << c.status() << " reason=" << c.reason()
       << " at=" << opt(c.lastTransitionTime()) << "\n";
  }
  os << "configSource: " << p.configSource.view() << "\n";
  os << "flags: localStorage=" << p.hasLocalStorage << " resourceClaims=" << p.hasResourceClaims << " ready=" << p.ready
     << " schedulingGated=" << p.schedulingGated << " evict=" << p.annotationEvict
     << " preferNoEviction=" << p.annotationPreferNoEviction << " mirror=" << p.mirror
     << " statusDetail=" << (p.statusDetail != nullptr) << " images=" << (p.images != nullptr) << "\n";
  return os.str();
}

// The same for a node.
inline std::string dumpNode(const api::Node& n) {
  std::ostringstream os;
  os << "node: " << n.name << " sym=" << n.nameSym.view() << "\n";
  os << "labels: " << n.labels.toString() << "\n";
  for (const auto& t : n.taints) os << "taint: " << t.key << "=" << t.value << ":" << api::toString(t.effect) << "\n";
  os << "unschedulable: " << n.unschedulable << "\n";
  os << "ready: " << (n.readyCondition ? (*n.readyCondition ? "True" : "False") : "unset") << "\n";
  os << "allocatable: " << n.allocatable.toString() << "\n";
  os << "creationTimestamp: " << dump_detail::opt(n.creationTimestamp) << "\n";
  return os.str();
}

}  // namespace kdesched::testing
