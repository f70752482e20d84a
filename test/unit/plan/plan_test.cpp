// Golden tests of `kdesched plan` output, run through the real binary, and its handling of bad
// input (exit 2, one line on stderr, no crash, no hang). UPDATE_GOLDEN=1 rewrites the golden files.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "test/unit/plan/cli.h"

namespace {

using kdesched::testing::CmdResult;
using kdesched::testing::example;
using kdesched::testing::expectGolden;
using kdesched::testing::kSrc;
using kdesched::testing::readFile;
using kdesched::testing::run;
namespace fs = std::filesystem;

TEST(PlanGolden, OrderPaymentTable) {
  CmdResult r = run(example("order-payment"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("payment-5b7c9d6f4-q8wzr"), std::string::npos);
  EXPECT_NE(r.out.find("violated by pod default/order-6d4f9c8b7-x2k9p"), std::string::npos);
  expectGolden(r.out, "order-payment.table.golden");
}

TEST(PlanGolden, OrderPaymentJson) {
  CmdResult r = run(example("order-payment") + " -o json");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  expectGolden(r.out, "order-payment.json.golden");
}

TEST(PlanGolden, OrderPaymentWithPdbIsRefused) {
  CmdResult r = run(example("order-payment-pdb"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("No evictions."), std::string::npos);
  EXPECT_NE(r.out.find("PodDisruptionBudget default/payment"), std::string::npos);
  expectGolden(r.out, "order-payment-pdb.table.golden");
  CmdResult j = run(example("order-payment-pdb") + " -o json");
  ASSERT_EQ(j.exitCode, 0) << j.err;
  expectGolden(j.out, "order-payment-pdb.json.golden");
}

struct Bad {
  std::string name;
  std::string snapshot = "";  // file content ("" = use the example snapshot)
  std::string policy = "";    // file content ("" = use the example policy)
  std::string wantInError;
};

class PlanBadInput : public ::testing::TestWithParam<Bad> {};

TEST_P(PlanBadInput, ExitsTwoWithOneLine) {
  const Bad& b = GetParam();
  fs::path dir = fs::temp_directory_path() / ("kdesched-bad-" + b.name + "-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path snap = kSrc / "examples/order-payment/snapshot.json";
  fs::path pol = kSrc / "examples/order-payment/policy.yaml";
  if (!b.snapshot.empty()) std::ofstream(snap = dir / "snapshot.json", std::ios::binary) << b.snapshot;
  if (!b.policy.empty()) std::ofstream(pol = dir / "policy.yaml", std::ios::binary) << b.policy;
  CmdResult r = run("plan --snapshot " + snap.string() + " --policy-config-file " + pol.string());
  fs::remove_all(dir);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "want exactly one line, got: " << r.err;
  EXPECT_NE(r.err.find(b.wantInError), std::string::npos) << r.err;
}

const std::string kGoodPolicyHead = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n";

std::string randomBytes(std::size_t n) {
  std::mt19937 rng(7);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Table, PlanBadInput,
    ::testing::Values(
        // An empty policy loads with a warning and runs nothing, as upstream (docs/policy-strictness.md).
        Bad{.name = "second_document",
            .policy = kGoodPolicyHead + "---\n" + kGoodPolicyHead,
            .wantInError = "second YAML document"},
        Bad{.name = "wrong_api_version",
            .policy = "apiVersion: descheduler/v1beta9\nkind: DeschedulerPolicy\n",
            .wantInError = "apiVersion"},
        Bad{.name = "v1alpha1",
            .policy = "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\nstrategies: {}\n",
            .wantInError = "v1alpha2"},
        Bad{.name = "malformed_yaml", .policy = kGoodPolicyHead + "profiles: [\n", .wantInError = "policy.yaml"},
        Bad{.name = "duplicate_key",
            .policy = kGoodPolicyHead + "maxNoOfPodsToEvictTotal: 1\nmaxNoOfPodsToEvictTotal: 2\n",
            .wantInError = "duplicate"},
        Bad{.name = "negative_limit",
            .policy = kGoodPolicyHead + "maxNoOfPodsToEvictPerNode: -1\n",
            .wantInError = "maxNoOfPodsToEvictPerNode"},
        Bad{.name = "selector_operator_maybe",
            .policy =
                kGoodPolicyHead +
                "profiles:\n- name: p\n  pluginConfig:\n  - name: RemovePodsViolatingInterPodAntiAffinity\n    args:\n"
                "      labelSelector:\n        matchExpressions:\n        - {key: app, operator: Maybe, values: [x]}\n"
                "  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n",
            .wantInError = "Maybe"},
        // The daemon's kdesched: block is checked by the plan too, with the field path.
        Bad{.name = "kdesched_block_typo",
            .policy = kGoodPolicyHead + "kdesched:\n  triggers:\n    debounse: 1s\n",
            .wantInError =
                "policy.yaml: kdesched.triggers.debounse: unknown field \"debounse\" (did you mean \"debounce\"?)"},
        Bad{.name = "kdesched_block_bad_value",
            .policy = kGoodPolicyHead + "kdesched:\n  antiFlapping:\n    backoffAfter: 0\n",
            .wantInError = "kdesched.antiFlapping.backoffAfter: must be at least 1, got 0"},
        Bad{.name = "empty_snapshot", .snapshot = "\n", .wantInError = "empty"},
        Bad{.name = "quantity_12x",
            .snapshot =
                R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p","namespace":"d"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"12x"}}}]}}]})",
            .wantInError = "12x"},
        Bad{.name = "random_10MB_policy", .policy = randomBytes(10 * 1024 * 1024), .wantInError = "policy.yaml"},
        Bad{.name = "random_10MB_snapshot", .snapshot = randomBytes(10 * 1024 * 1024), .wantInError = "snapshot.json"}),
    [](const auto& info) { return info.param.name; });

TEST(PlanCli, MissingFlagsAndUnknownFlagsExitTwo) {
  EXPECT_EQ(run("plan").exitCode, 2);
  EXPECT_EQ(run("plan --snapshot x --policy-config-file y --bogus").exitCode, 2);
  EXPECT_EQ(run("plan --snapshot /nonexistent --policy-config-file /nonexistent").exitCode, 2);
}

TEST(PlanCli, PodOnMissingNodeIsANamedSkip) {
  fs::path dir = fs::temp_directory_path() / ("kdesched-orphan-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.json") << R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"1","memory":"1Gi","pods":"10"}}},
    {"kind":"Node","metadata":{"name":"n2"},"status":{"allocatable":{"cpu":"1","memory":"1Gi","pods":"10"}}},
    {"kind":"Pod","metadata":{"name":"ghost","namespace":"default"},"spec":{"nodeName":"n9"},"status":{"phase":"Running"}}]})";
  CmdResult r = run("plan --snapshot " + (dir / "s.json").string() + " --policy-config-file " +
                    (kSrc / "examples/order-payment/policy.yaml").string());
  fs::remove_all(dir);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("pod default/ghost is bound to node n9, which is not in the snapshot"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("skipped 1 Pod on an unknown node"), std::string::npos) << r.out;
}

// Moves need the Deployment objects, which a snapshot file does not hold: the plan evicts as
// without moves and says why the pod did not move; JSON names it too.
TEST(PlanCli, MovesOnASnapshotSayTheyNeedTheApiServer) {
  fs::path dir = fs::temp_directory_path() / ("kdesched-moves-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "p.yaml") << readFile(kSrc / "examples/order-payment/policy.yaml")
                                << "kdesched:\n  moves: {enabled: true}\n";
  const std::string args = "plan --snapshot " + (kSrc / "examples/order-payment/snapshot.json").string() +
                           " --policy-config-file " + (dir / "p.yaml").string();
  CmdResult table = run(args);
  CmdResult json = run(args + " -o json");
  fs::remove_all(dir);
  EXPECT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("payment-5b7c9d6f4-q8wzr  node2  RemovePodsViolatingInterPodAntiAffinity"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("; no move: a snapshot file holds no Deployments"), std::string::npos) << table.out;
  EXPECT_NE(json.out.find(R"("noMove": "a snapshot file holds no Deployments)"), std::string::npos) << json.out;
  EXPECT_EQ(json.out.find(R"("move":)"), std::string::npos) << json.out;
}

// The order/payment story where the only other node is tainted: without DefaultEvictor's nodeFit
// payment still goes, and the plan says it would stay Pending, and why.
TEST(PlanCli, APodThatFitsNowhereSaysSo) {
  fs::path dir = fs::temp_directory_path() / ("kdesched-nowhere-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.json") << R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"n1"}},"status":{"allocatable":{"cpu":"1","memory":"1Gi","pods":"10"}}},
    {"kind":"Node","metadata":{"name":"n2","labels":{"kubernetes.io/hostname":"n2"}},"spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]},"status":{"allocatable":{"cpu":"1","memory":"1Gi","pods":"10"}}},
    {"kind":"Pod","metadata":{"name":"order","namespace":"default","labels":{"app":"order"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"order","uid":"u1","controller":true}]},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}},
    {"kind":"Pod","metadata":{"name":"payment","namespace":"default","labels":{"app":"payment"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"payment","uid":"u2","controller":true}]},"spec":{"nodeName":"n1","affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"order"}},"topologyKey":"kubernetes.io/hostname"}]}}},"status":{"phase":"Running"}}]})";
  std::ofstream(dir / "p.yaml") << kGoodPolicyHead
                                << "profiles:\n- name: default\n  pluginConfig:\n"
                                   "  - name: RemovePodsViolatingInterPodAntiAffinity\n  plugins:\n    deschedule:\n"
                                   "      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n";
  const std::string args =
      "plan --snapshot " + (dir / "s.json").string() + " --policy-config-file " + (dir / "p.yaml").string();
  CmdResult table = run(args);
  CmdResult json = run(args + " -o json");
  fs::remove_all(dir);
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("payment  n1    RemovePodsViolatingInterPodAntiAffinity  nowhere: would stay Pending  "),
            std::string::npos)
      << table.out;
  ASSERT_EQ(json.exitCode, 0) << json.err;
  EXPECT_NE(json.out.find(R"("landing": {
        "expected": null,
        "fitsNowhere": true,
        "reasons": {
          "untolerated taint": 1
        }
      })"),
            std::string::npos)
      << json.out;
}

// A pod requesting 10P of memory and a node advertising 100E: both beyond int64 milli-units, both
// accepted by the API server. The plan once refused the whole snapshot (exit 2); now the amounts
// saturate, the plan runs (payment still goes) and it names what was saturated.
TEST(PlanCli, SaturatedAmountsPlanAndAreNamed) {
  fs::path dir = fs::temp_directory_path() / ("kdesched-saturated-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.json") << R"({"kind":"List","items":[
    {"kind":"Node","metadata":{"name":"n1","labels":{"kubernetes.io/hostname":"n1"}},"status":{"allocatable":{"cpu":"1","memory":"1Gi","pods":"10"}}},
    {"kind":"Node","metadata":{"name":"n2","labels":{"kubernetes.io/hostname":"n2"}},"status":{"allocatable":{"cpu":"1","memory":"1Gi","pods":"10"}}},
    {"kind":"Node","metadata":{"name":"virtual","labels":{"kubernetes.io/hostname":"virtual"}},"status":{"allocatable":{"cpu":"1e15","memory":"100E","pods":"110"}}},
    {"kind":"Pod","metadata":{"name":"hog","namespace":"tenant"},"spec":{"nodeName":"n2","containers":[{"name":"c","resources":{"requests":{"memory":"10P"}}}]},"status":{"phase":"Running"}},
    {"kind":"Pod","metadata":{"name":"order","namespace":"default","labels":{"app":"order"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"order","uid":"u1","controller":true}]},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}},
    {"kind":"Pod","metadata":{"name":"payment","namespace":"default","labels":{"app":"payment"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"payment","uid":"u2","controller":true}]},"spec":{"nodeName":"n1","affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"order"}},"topologyKey":"kubernetes.io/hostname"}]}}},"status":{"phase":"Running"}}]})";
  const std::string args = "plan --snapshot " + (dir / "s.json").string() + " --policy-config-file " +
                           (kSrc / "examples/order-payment/policy.yaml").string();
  CmdResult table = run(args);
  CmdResult json = run(args + " -o json");
  fs::remove_all(dir);
  ASSERT_EQ(table.exitCode, 0) << table.err << table.out;
  EXPECT_NE(table.out.find("payment"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("saturated: node virtual allocatable memory beyond int64 milli-units"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("saturated: pod tenant/hog requests memory beyond int64 milli-units"), std::string::npos)
      << table.out;
  ASSERT_EQ(json.exitCode, 0) << json.err;
  EXPECT_NE(json.out.find("saturated: pod tenant/hog requests memory"), std::string::npos) << json.out;
}

// policies/budgets.yaml on examples/mixed: on a Monday at 11:00 in Berlin the business-hours
// freeze refuses the anti-affinity eviction, naming itself and its end in Berlin time, and
// --explain lists the active budgets; on the Sunday before, the same plan evicts.
TEST(PlanBudgets, AFreezeRefusesAtNowAndExplainListsTheActiveBudgets) {
  const std::string args = "plan --snapshot " + (kSrc / "examples/mixed/snapshot.json").string() +
                           " --policy-config-file " + (kSrc / "policies/budgets.yaml").string();
  CmdResult monday = run(args + " --now 2026-11-30T10:00:00Z --explain shop/checkout-0");
  ASSERT_EQ(monday.exitCode, 0) << monday.err;
  EXPECT_NE(monday.out.find("budget \"business-hours\"  active until 2026-11-30T18:00:00+01:00 (Europe/Berlin): 0 "
                            "of 0 evictions left"),
            std::string::npos)
      << monday.out;
  EXPECT_NE(monday.out.find("Active disruption budgets:"), std::string::npos) << monday.out;
  expectGolden(monday.out, "policies/budgets.monday.table.golden");
  CmdResult json = run(args + " --now 2026-11-30T10:00:00Z --explain shop/checkout-0 -o json");
  ASSERT_EQ(json.exitCode, 0) << json.err;
  EXPECT_NE(json.out.find("\"kind\": \"budget\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"activeBudgets\""), std::string::npos) << json.out;
  CmdResult sunday = run(args + " --now 2026-11-29T10:00:00Z");
  ASSERT_EQ(sunday.exitCode, 0) << sunday.err;
  EXPECT_EQ(sunday.out.find("budget \""), std::string::npos) << sunday.out;
  EXPECT_NE(sunday.out.find("Summary: 1 eviction, 0 refused"), std::string::npos) << sunday.out;
}

}  // namespace

namespace {

// Every example policy in policies/ explains what it would do on a cluster with one violation of
// each kind (examples/mixed).
class PolicyExamples : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyExamples, PlanMatchesGolden) {
  const std::string name = GetParam();
  CmdResult r = run("plan --snapshot " + (kSrc / "examples/mixed/snapshot.json").string() + " --policy-config-file " +
                    (kSrc / "policies" / (name + ".yaml")).string() + " --now 2026-11-30T10:00:00Z");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find("No evictions."), std::string::npos)
      << "policies/" << name << ".yaml evicts nothing on examples/mixed";
  expectGolden(r.out, "policies/" + name + ".table.golden");
}

INSTANTIATE_TEST_SUITE_P(Policies, PolicyExamples,
                         ::testing::Values("anti-affinity", "node-affinity", "low-node-utilization", "topology-spread",
                                           "high-node-utilization", "remove-duplicates", "default"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
