// `kdesched plan` (in-process) with policies/node-taints.yaml over a snapshot whose pods tolerate a
// node's taint with Gt/Lt (TaintTolerationComparisonOperators): from the JSON a pod is read, through
// DefaultEvictor and the plugin, to the plan. The node's taint value 990 is bigger than the
// tolerations' 950, so Gt keeps its pod and Lt does not; an operator kdesched does not know
// tolerates nothing, as upstream.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <unistd.h>

#include "test/unit/plugins/plan_golden.h"

namespace kdesched::testing {
namespace {

namespace fs = std::filesystem;

std::string node(const std::string& name, const std::string& taints) {
  return R"({"kind":"Node","metadata":{"name":")" + name + R"(","labels":{"kubernetes.io/hostname":")" + name +
         R"("}},"spec":{"taints":[)" + taints +
         R"(]},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"20"},)"
         R"("conditions":[{"type":"Ready","status":"True"}]}})";
}

std::string pod(const std::string& name, const std::string& op) {
  return R"({"kind":"Pod","metadata":{"name":")" + name + R"(","namespace":"shop","uid":"uid-)" + name +
         R"(","creationTimestamp":"2026-11-30T08:00:00Z","ownerReferences":[{"apiVersion":"apps/v1",)"
         R"("kind":"ReplicaSet","name":"rs-)" +
         name + R"(","uid":"uid-rs-)" + name + R"(","controller":true}]},"spec":{"nodeName":"node1",)" +
         R"("containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}],"tolerations":[)" +
         R"({"key":"node.example.com/sla","operator":")" + op +
         R"(","value":"950","effect":"NoSchedule"}]},"status":{"phase":"Running",)"
         R"("startTime":"2026-11-30T08:00:00Z","conditions":[{"type":"Ready","status":"True"}]}})";
}

// The POD column of the table plan.
std::set<std::string> evicted(const std::string& table) {
  std::set<std::string> pods;
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line) && !line.empty()) {
    std::istringstream cols(line);
    std::string ns, name;
    cols >> ns >> name;
    pods.insert(name);
  }
  return pods;
}

TEST(NodeTaintsComparisonOperators, GtKeepsThePodLtAndUnknownDoNot) {
  const fs::path dir = fs::temp_directory_path() / ("kdesched-tolerations-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path snapshot = dir / "snapshot.json";
  std::ofstream(snapshot) << R"({"apiVersion":"v1","kind":"List","items":[)"
                          << node("node1", R"({"key":"node.example.com/sla","value":"990","effect":"NoSchedule"})")
                          << "," << node("node2", "") << "," << pod("gt-tolerated", "Gt") << ","
                          << pod("lt-untolerated", "Lt") << "," << pod("future-operator", "Between") << "]}";
  const std::string table = planOf(snapshot, kSourceDir / "policies/node-taints.yaml", plan::OutputFormat::Table);
  fs::remove_all(dir);
  EXPECT_EQ(evicted(table), (std::set<std::string>{"lt-untolerated", "future-operator"})) << table;
  EXPECT_NE(table.find("node node1 has taint node.example.com/sla=990:NoSchedule, which the pod does not tolerate"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace kdesched::testing
