// Helpers shared by the topologyspread tests: constraints, zone nodes and pods named as in
// upstream's TestTopologySpreadConstraint.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {

using PodPtr = std::shared_ptr<const api::Pod>;
using NodePtr = std::shared_ptr<const api::Node>;
using PdbPtr = std::shared_ptr<const api::PodDisruptionBudget>;
using api::UnsatisfiableAction;

inline constexpr const char* kPlugin = "RemovePodsViolatingTopologySpreadConstraint";
inline constexpr const char* kZone = "topology.kubernetes.io/zone";

inline api::TopologySpreadConstraint spread(std::int32_t maxSkew, std::string key = kZone,
                                            UnsatisfiableAction when = UnsatisfiableAction::DoNotSchedule,
                                            api::LabelSelector selector = selectorOf("foo", "bar")) {
  api::TopologySpreadConstraint c;
  c.maxSkew = maxSkew;
  c.topologyKey = std::move(key);
  c.whenUnsatisfiable = when;
  c.labelSelector = std::move(selector);
  return c;
}

inline NodePtr zoneNode(const std::string& name, const std::string& zone) {
  return NodeBuilder(name).zone(zone).build();
}

// Pods named pod-<n> in namespace ns1, numbered across calls as upstream's createTestPods does.
struct Pods {
  int next = 0;
  std::vector<PodPtr> out;
  Pods& add(int count, const std::string& node, const std::function<void(PodBuilder&)>& fn = {},
            std::vector<std::pair<std::string, std::string>> labels = {{"foo", "bar"}}) {
    for (int i = 0; i < count; ++i) {
      PodBuilder b("pod-" + std::to_string(next++), "ns1");
      b.node(node);
      for (const auto& [k, v] : labels) b.label(k, v);
      if (fn) fn(b);
      out.push_back(b.build());
    }
    return *this;
  }
  // `count` pods declaring `c`.
  Pods& with(int count, const std::string& node, const api::TopologySpreadConstraint& c,
             const std::function<void(PodBuilder&)>& fn = {}) {
    return add(count, node, [&](PodBuilder& b) {
      b.spread(c);
      if (fn) fn(b);
    });
  }
};

inline std::vector<std::string> ns1(std::initializer_list<const char*> names) {
  std::vector<std::string> out;
  for (const char* n : names) out.push_back(std::string("ns1/") + n);
  return out;
}

inline std::vector<NodePtr> twoZones() { return {zoneNode("n1", "zoneA"), zoneNode("n2", "zoneB")}; }
inline std::vector<NodePtr> threeZones() {
  return {zoneNode("n1", "zoneA"), zoneNode("n2", "zoneB"), zoneNode("n3", "zoneC")};
}

}  // namespace kdesched::testing
