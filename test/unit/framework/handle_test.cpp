#include "pkg/framework/plugin.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

std::vector<std::string> names(const std::vector<const api::Pod*>& pods) {
  std::vector<std::string> out;
  for (const api::Pod* p : pods) out.push_back(p->ns.str() + "/" + p->name);
  return out;
}

// A scoped run's candidates on a node are the node's pods in scope, in snapshot order, without
// the evicted (and the terminal, unless asked for): the same whether the Handle reads the scope's
// own lists (a cycle sets them) or filters the node's pods.
TEST(Handle, CandidatesOnANodeAreItsPodsInScopeWhicheverWayTheyAreFound) {
  ClusterBuilder b;
  b.add(NodeBuilder("n1").build()).add(NodeBuilder("n2").build());
  b.add(PodBuilder("d", "ns2").node("n1").build()).add(PodBuilder("a", "ns1").node("n1").build());
  b.add(PodBuilder("c", "ns1").node("n1").build()).add(PodBuilder("b", "ns1").node("n2").build());
  b.add(PodBuilder("done", "ns1").node("n1").phase(api::PodPhase::Succeeded).build());
  b.add(PodBuilder("gone", "ns1").node("n1").build()).add(PodBuilder("unbound", "ns1").build());
  auto snap = b.snapshot();
  const framework::PodScope scope =
      podNames({"ns2/d", "ns1/c", "ns1/b", "ns1/done", "ns1/gone", "ns1/unbound", "ns1/bb"});
  framework::CycleState state;
  const api::Pod* gone = snap->podsInNamespace(api::Symbol("ns1"))[4];
  ASSERT_EQ(gone->name, "gone");
  state.markEvicted(*gone);
  const framework::ScopeByNode byNode = framework::scopeByNode(*snap, *scope);
  for (bool lists : {false, true}) {
    framework::Handle h(*snap, snap->nodes(), state, nullptr, "p", "x", scope);
    if (lists) h.setScopeByNode(&byNode);
    const api::Node& n1 = *snap->node("n1");
    EXPECT_EQ(names(h.candidatesOnNode(n1)), (std::vector<std::string>{"ns1/c", "ns2/d"})) << lists;
    EXPECT_EQ(names(h.candidatesOnNode(n1, framework::PodPhases::All)),
              (std::vector<std::string>{"ns1/c", "ns1/done", "ns2/d"}))
        << lists;
    EXPECT_EQ(names(h.candidatesOnNode(*snap->node("n2"))), std::vector<std::string>{"ns1/b"}) << lists;
  }
  framework::Handle everyPod(*snap, snap->nodes(), state, nullptr, "p", "x");
  EXPECT_EQ(names(everyPod.candidatesOnNode(*snap->node("n1"))), (std::vector<std::string>{"ns1/a", "ns1/c", "ns2/d"}));
}

}  // namespace
}  // namespace kdesched::testing
