// A snapshot holding a pod whose toleration uses Gt/Lt (TaintTolerationComparisonOperators) or an
// operator this build does not know loads; before, one such pod refused the whole file.
#include <gtest/gtest.h>

#include <string>

#include "pkg/cluster/loader.h"

namespace kdesched::cluster {
namespace {

TEST(LoaderTolerations, ComparisonAndUnknownOperatorsLoad) {
  const std::string text = R"(apiVersion: v1
kind: List
items:
- kind: Node
  metadata: {name: n1}
  spec:
    taints: [{key: node.example.com/sla, value: "990", effect: NoSchedule}]
- kind: Pod
  metadata: {name: gt, namespace: default}
  spec:
    nodeName: n1
    tolerations: [{key: node.example.com/sla, operator: Gt, value: "950", effect: NoSchedule}]
- kind: Pod
  metadata: {name: future, namespace: default}
  spec:
    nodeName: n1
    tolerations: [{key: node.example.com/sla, operator: Between, value: "950"}]
)";
  Store s;
  auto r = loadSnapshot(text, "snap.yaml", s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->loaded.at("Pod"), 2u);
  auto snap = s.snapshot();
  ASSERT_EQ(snap->podCount(), 2u);
  for (const api::Pod* p : snap->pods()) {
    ASSERT_EQ(p->constraints().tolerations.size(), 1u) << p->name;
    EXPECT_EQ(p->constraints().tolerations[0].op, p->name == "gt" ? api::TolerationOp::Gt : api::TolerationOp::Unknown)
        << p->name;
  }
}

}  // namespace
}  // namespace kdesched::cluster
