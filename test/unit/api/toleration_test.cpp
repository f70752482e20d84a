// Tolerations with the comparison operators Gt/Lt (TaintTolerationComparisonOperators) and with
// operators this build does not know: matched as k8s.io/api v0.36.1 Toleration.ToleratesTaint
// with enableComparisonOperators (what upstream descheduler v0.36 passes), and decoded without
// refusing the pod.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <variant>
#include <vector>

#include "pkg/api/scheduling.h"
#include "test/unit/api/decode_fixtures.h"

namespace kdesched::api {
namespace {

std::string testName(std::string n) {
  for (char& ch : n) {
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

// --- matching ----------------------------------------------------------------------------------

struct ComparisonCase {
  const char* name;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

Toleration tol(TolerationOp op, std::string value, std::string key = "sla", TaintEffect e = TaintEffect::None) {
  return {std::move(key), op, std::move(value), e, std::nullopt};
}
Taint taint(std::string value, std::string key = "sla", TaintEffect e = TaintEffect::NoSchedule) {
  return {std::move(key), std::move(value), e};
}

class ComparisonOperatorTest : public ::testing::TestWithParam<ComparisonCase> {};

TEST_P(ComparisonOperatorTest, ToleratesTaint) {
  const auto& c = GetParam();
  EXPECT_EQ(toleratesTaint(c.toleration, c.taint), c.tolerates) << c.name;
  EXPECT_EQ(toleratesTaint(std::vector<Toleration>{c.toleration}, c.taint), c.tolerates) << c.name;
}

// Gt tolerates a taint whose value is greater than the toleration's, Lt one whose value is less.
INSTANTIATE_TEST_SUITE_P(
    Values, ComparisonOperatorTest,
    ::testing::Values(ComparisonCase{"Gt bigger taint", tol(TolerationOp::Gt, "5"), taint("10"), true},
                      ComparisonCase{"Gt equal", tol(TolerationOp::Gt, "5"), taint("5"), false},
                      ComparisonCase{"Gt smaller taint", tol(TolerationOp::Gt, "5"), taint("3"), false},
                      ComparisonCase{"Lt smaller taint", tol(TolerationOp::Lt, "5"), taint("3"), true},
                      ComparisonCase{"Lt equal", tol(TolerationOp::Lt, "5"), taint("5"), false},
                      ComparisonCase{"Lt bigger taint", tol(TolerationOp::Lt, "5"), taint("10"), false},
                      ComparisonCase{"numbers not strings", tol(TolerationOp::Gt, "9"), taint("10"), true},
                      ComparisonCase{"Gt negatives", tol(TolerationOp::Gt, "-5"), taint("-1"), true},
                      ComparisonCase{"Gt negative taint", tol(TolerationOp::Gt, "-5"), taint("-10"), false},
                      ComparisonCase{"Lt negatives", tol(TolerationOp::Lt, "-5"), taint("-10"), true},
                      ComparisonCase{"zero against negative", tol(TolerationOp::Gt, "-1"), taint("0"), true},
                      ComparisonCase{"int64 range ends", tol(TolerationOp::Lt, "9223372036854775807"),
                                     taint("-9223372036854775808"), true}),
    [](const auto& info) { return testName(info.param.name); });

// Values that content.IsDecimalInteger or strconv.ParseInt refuse, on either side, never match;
// each case would match if the value were read leniently.
INSTANTIATE_TEST_SUITE_P(
    NotIntegers, ComparisonOperatorTest,
    ::testing::Values(
        ComparisonCase{"leading zero in toleration", tol(TolerationOp::Gt, "01"), taint("5"), false},
        ComparisonCase{"leading zero in taint", tol(TolerationOp::Gt, "1"), taint("010"), false},
        ComparisonCase{"leading zero after minus", tol(TolerationOp::Lt, "-01"), taint("-5"), false},
        ComparisonCase{"minus zero", tol(TolerationOp::Gt, "-0"), taint("5"), false},
        ComparisonCase{"plus in toleration", tol(TolerationOp::Gt, "+1"), taint("5"), false},
        ComparisonCase{"plus in taint", tol(TolerationOp::Gt, "1"), taint("+5"), false},
        ComparisonCase{"empty toleration value", tol(TolerationOp::Lt, ""), taint("-5"), false},
        ComparisonCase{"empty taint value", tol(TolerationOp::Lt, "1"), taint(""), false},
        ComparisonCase{"lone minus", tol(TolerationOp::Lt, "-"), taint("-5"), false},
        ComparisonCase{"toleration below int64", tol(TolerationOp::Gt, "-9223372036854775809"), taint("5"), false},
        ComparisonCase{"toleration above int64", tol(TolerationOp::Lt, "9223372036854775808"), taint("5"), false},
        ComparisonCase{"taint below int64", tol(TolerationOp::Lt, "5"), taint("-9223372036854775809"), false},
        ComparisonCase{"taint above int64", tol(TolerationOp::Gt, "5"), taint("9223372036854775808"), false},
        ComparisonCase{"decimal point", tol(TolerationOp::Gt, "1.5"), taint("5"), false},
        ComparisonCase{"hexadecimal", tol(TolerationOp::Lt, "100"), taint("0x10"), false},
        ComparisonCase{"spaces", tol(TolerationOp::Gt, " 1"), taint("5"), false},
        ComparisonCase{"trailing garbage", tol(TolerationOp::Gt, "1"), taint("5a"), false}),
    [](const auto& info) { return testName(info.param.name); });

// The effect and the key are checked before the values, as for Equal; an unknown operator
// tolerates nothing, not even a taint an Equal or Exists toleration would.
INSTANTIATE_TEST_SUITE_P(
    KeyEffectAndUnknown, ComparisonOperatorTest,
    ::testing::Values(
        ComparisonCase{"Gt other key", tol(TolerationOp::Gt, "5", "other"), taint("10"), false},
        ComparisonCase{"Gt other effect", tol(TolerationOp::Gt, "5", "sla", TaintEffect::NoExecute), taint("10"),
                       false},
        ComparisonCase{"Gt same effect", tol(TolerationOp::Gt, "5", "sla", TaintEffect::NoSchedule), taint("10"), true},
        ComparisonCase{"Lt empty key compares any key", tol(TolerationOp::Lt, "5", ""), taint("3", "other"), true},
        ComparisonCase{"Lt empty key, other effect", tol(TolerationOp::Lt, "5", "", TaintEffect::PreferNoSchedule),
                       taint("3", "other"), false},
        ComparisonCase{"Unknown same value", tol(TolerationOp::Unknown, "gpu"), taint("gpu"), false},
        ComparisonCase{"Unknown empty key and value", tol(TolerationOp::Unknown, "", ""), taint(""), false},
        ComparisonCase{"Unknown numbers", tol(TolerationOp::Unknown, "5"), taint("10"), false}),
    [](const auto& info) { return testName(info.param.name); });

// --- decoding ----------------------------------------------------------------------------------

struct OperatorCase {
  const char* name;
  const char* op;  // the JSON value of "operator"
  TolerationOp want;
};

class TolerationOperatorDecodeTest : public ::testing::TestWithParam<OperatorCase> {};

std::string podWithToleration(const std::string& op) {
  return R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"n1","tolerations":[)"
         R"({"key":"node.example.com/sla","operator":)" +
         op + R"(,"value":"950","effect":"NoSchedule"}]}})";
}

TEST_P(TolerationOperatorDecodeTest, DecodesThePod) {
  const auto& c = GetParam();
  const Toleration want{"node.example.com/sla", c.want, "950", TaintEffect::NoSchedule, std::nullopt};
  auto pod = podFromJson(podWithToleration(c.op));
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->constraints().tolerations, std::vector<Toleration>{want});
  // The daemon's single-object path (a GET of one pod).
  auto obj = decodeObjectJson(R"({"kind":"Pod",)" + podWithToleration(c.op).substr(1));
  ASSERT_TRUE(obj.isOk()) << obj.error();
  ASSERT_TRUE(std::holds_alternative<Pod>(*obj));
  EXPECT_EQ(std::get<Pod>(*obj).constraints().tolerations, std::vector<Toleration>{want});
}

INSTANTIATE_TEST_SUITE_P(
    Table, TolerationOperatorDecodeTest,
    ::testing::Values(OperatorCase{"Gt", R"("Gt")", TolerationOp::Gt}, OperatorCase{"Lt", R"("Lt")", TolerationOp::Lt},
                      OperatorCase{"Equal", R"("Equal")", TolerationOp::Equal},
                      OperatorCase{"empty is Equal", R"("")", TolerationOp::Equal},
                      OperatorCase{"Exists", R"("Exists")", TolerationOp::Exists},
                      OperatorCase{"a future operator", R"("Between")", TolerationOp::Unknown},
                      OperatorCase{"operators are case sensitive", R"("gt")", TolerationOp::Unknown}),
    [](const auto& info) { return testName(info.param.name); });

TEST(TolerationOperatorDecodeTest, FromYaml) {
  auto pod = podFromYaml(R"(metadata: {name: p, namespace: ns}
spec:
  tolerations:
  - {key: node.example.com/sla, operator: Gt, value: "950", effect: NoSchedule}
  - {key: node.example.com/sla, operator: Lt, value: "-3"}
)");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(
      pod->constraints().tolerations,
      (std::vector<Toleration>{{"node.example.com/sla", TolerationOp::Gt, "950", TaintEffect::NoSchedule, std::nullopt},
                               {"node.example.com/sla", TolerationOp::Lt, "-3", TaintEffect::None, std::nullopt}}));
}

// Only a string naming no operator is tolerated; a value of the wrong JSON type is still an error.
TEST(TolerationOperatorDecodeTest, NonStringOperatorIsAnError) {
  for (const char* op : {"1", "true", "[\"Gt\"]", "{}"}) {
    auto pod = podFromJson(podWithToleration(op));
    ASSERT_FALSE(pod.isOk()) << op;
    EXPECT_EQ(pod.error().rfind("spec.tolerations[0].operator: expected string, got ", 0), 0u) << pod.error();
  }
}

}  // namespace
}  // namespace kdesched::api
