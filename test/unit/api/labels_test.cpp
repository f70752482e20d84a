#include "pkg/api/labels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kdesched::api {
namespace {

using ::testing::HasSubstr;

TEST(LabelsTest, SortedUniqueKeys) {
  Labels l{{"b", "2"}, {"a", "1"}};
  l.set("c", "3");
  l.set("a", "9");
  EXPECT_EQ(l.size(), 3u);
  EXPECT_EQ(l.toString(), "a=9,b=2,c=3");
  EXPECT_EQ(l.get("b"), "2");
  EXPECT_FALSE(l.get("z").has_value());
  EXPECT_TRUE(l.has("c"));
  EXPECT_EQ(Labels{}.toString(), "");
}

TEST(LabelsTest, FromUnsortedKeepsTheLastOfRepeatedKeys) {
  const Labels l = Labels::fromUnsorted({{Symbol("z"), Symbol("1")},
                                         {Symbol("a"), Symbol("first")},
                                         {Symbol("m"), Symbol("x")},
                                         {Symbol("a"), Symbol("last")}});
  EXPECT_EQ(l.toString(), "a=last,m=x,z=1");
  EXPECT_EQ(l, (Labels{{"z", "1"}, {"m", "x"}, {"a", "last"}}));
}

// --- metav1.LabelSelector matching -------------------------------------------------------------

struct MatchCase {
  const char* name;
  LabelSelector selector;
  Labels labels;
  bool matches;
};

class SelectorMatchTest : public ::testing::TestWithParam<MatchCase> {};

TEST_P(SelectorMatchTest, Matches) {
  const auto& c = GetParam();
  EXPECT_EQ(c.selector.matches(c.labels), c.matches) << c.name;
}

const Labels kWeb{{"app", "web"}, {"tier", "front"}, {"replicas", "3"}};

INSTANTIATE_TEST_SUITE_P(
    Table, SelectorMatchTest,
    ::testing::Values(MatchCase{"empty selector matches everything", {}, kWeb, true},
                      MatchCase{"empty selector matches no labels", {}, {}, true},
                      MatchCase{"matchLabels equal", {{{"app", "web"}}, {}}, kWeb, true},
                      MatchCase{"matchLabels differ", {{{"app", "db"}}, {}}, kWeb, false},
                      MatchCase{"matchLabels key absent", {{{"zone", "a"}}, {}}, kWeb, false},
                      MatchCase{"In", {{}, {{"tier", LabelSelectorOp::In, {"back", "front"}}}}, kWeb, true},
                      MatchCase{"In other value", {{}, {{"tier", LabelSelectorOp::In, {"back"}}}}, kWeb, false},
                      MatchCase{"In key absent", {{}, {{"zone", LabelSelectorOp::In, {"a"}}}}, kWeb, false},
                      MatchCase{"NotIn other value", {{}, {{"tier", LabelSelectorOp::NotIn, {"back"}}}}, kWeb, true},
                      MatchCase{"NotIn value", {{}, {{"tier", LabelSelectorOp::NotIn, {"front"}}}}, kWeb, false},
                      MatchCase{"NotIn key absent", {{}, {{"zone", LabelSelectorOp::NotIn, {"a"}}}}, kWeb, true},
                      MatchCase{"Exists", {{}, {{"app", LabelSelectorOp::Exists, {}}}}, kWeb, true},
                      MatchCase{"Exists absent", {{}, {{"zone", LabelSelectorOp::Exists, {}}}}, kWeb, false},
                      MatchCase{"DoesNotExist absent", {{}, {{"zone", LabelSelectorOp::DoesNotExist, {}}}}, kWeb, true},
                      MatchCase{
                          "DoesNotExist present", {{}, {{"app", LabelSelectorOp::DoesNotExist, {}}}}, kWeb, false},
                      MatchCase{"Gt", {{}, {{"replicas", LabelSelectorOp::Gt, {"2"}}}}, kWeb, true},
                      MatchCase{"Gt equal", {{}, {{"replicas", LabelSelectorOp::Gt, {"3"}}}}, kWeb, false},
                      MatchCase{"Lt", {{}, {{"replicas", LabelSelectorOp::Lt, {"10"}}}}, kWeb, true},
                      MatchCase{"Gt non-integer label", {{}, {{"app", LabelSelectorOp::Gt, {"1"}}}}, kWeb, false},
                      MatchCase{"labels AND expressions: both hold",
                                {{{"app", "web"}}, {{"tier", LabelSelectorOp::In, {"front"}}}},
                                kWeb,
                                true},
                      MatchCase{"labels AND expressions: expression fails",
                                {{{"app", "web"}}, {{"tier", LabelSelectorOp::In, {"back"}}}},
                                kWeb,
                                false},
                      MatchCase{"labels AND expressions: label fails",
                                {{{"app", "db"}}, {{"tier", LabelSelectorOp::In, {"front"}}}},
                                kWeb,
                                false}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

// --- selector string syntax --------------------------------------------------------------------

struct ParseCase {
  const char* text;
  const char* canonical;  // toString() of the parsed selector
  Labels labels;
  bool matches;
};

class SelectorParseTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(SelectorParseTest, ParsesAndMatches) {
  const auto& c = GetParam();
  auto r = parseLabelSelector(c.text);
  ASSERT_TRUE(r.isOk()) << c.text << ": " << r.error();
  EXPECT_EQ(r->toString(), c.canonical) << c.text;
  EXPECT_EQ(r->matches(c.labels), c.matches) << c.text << " vs " << c.labels.toString();
  // The canonical form parses back to an equivalent selector.
  auto again = parseLabelSelector(r->toString());
  ASSERT_TRUE(again.isOk()) << again.error();
  EXPECT_EQ(again->toString(), c.canonical);
  EXPECT_EQ(again->matches(c.labels), c.matches);
}

INSTANTIATE_TEST_SUITE_P(
    Table, SelectorParseTest,
    ::testing::Values(
        ParseCase{"", "", {}, true}, ParseCase{"   ", "", {{"a", "b"}}, true},
        ParseCase{"a=b", "a=b", {{"a", "b"}}, true}, ParseCase{"a=b", "a=b", {{"a", "c"}}, false},
        ParseCase{"a=b", "a=b", {}, false}, ParseCase{"a==b", "a=b", {{"a", "b"}}, true},
        ParseCase{"a!=b", "a!=b", {}, true}, ParseCase{"a!=b", "a!=b", {{"a", "b"}}, false},
        ParseCase{"a!=b", "a!=b", {{"a", "c"}}, true}, ParseCase{"a in (y,x)", "a in (x,y)", {{"a", "y"}}, true},
        ParseCase{"a in (x,y)", "a in (x,y)", {{"a", "z"}}, false},
        ParseCase{"a in (x,x)", "a in (x)", {{"a", "x"}}, true}, ParseCase{"x notin (y)", "x!=y", {}, true},
        ParseCase{"x notin (y,z)", "x notin (y,z)", {{"x", "z"}}, false}, ParseCase{"a", "a", {{"a", ""}}, true},
        ParseCase{"a", "a", {}, false}, ParseCase{"!a", "!a", {}, true}, ParseCase{"!a", "!a", {{"a", "1"}}, false},
        ParseCase{"a>1", "a>1", {{"a", "2"}}, true}, ParseCase{"a>1", "a>1", {{"a", "1"}}, false},
        ParseCase{"a>1", "a>1", {{"a", "x"}}, false}, ParseCase{"a>1", "a>1", {}, false},
        ParseCase{"a<10", "a<10", {{"a", "-5"}}, true},
        ParseCase{"a=b,c!=d,e in (f,g),!h", "a=b,c!=d,e in (f,g),!h", {{"a", "b"}, {"e", "g"}}, true},
        ParseCase{"a=b,c!=d,e in (f,g),!h", "a=b,c!=d,e in (f,g),!h", {{"a", "b"}, {"e", "g"}, {"h", "1"}}, false},
        ParseCase{"a=b,c!=d,e in (f,g),!h", "a=b,c!=d,e in (f,g),!h", {{"a", "b"}, {"c", "d"}, {"e", "f"}}, false},
        ParseCase{"  a = b ,\tc notin ( d , e )\n", "a=b,c notin (d,e)", {{"a", "b"}, {"c", "x"}}, true},
        ParseCase{"z=1,a=2", "a=2,z=1", {{"a", "2"}, {"z", "1"}}, true}, ParseCase{"in=x", "in=x", {{"in", "x"}}, true},
        ParseCase{"a=in", "a=in", {{"a", "in"}}, true}, ParseCase{"a=", "a=", {{"a", ""}}, true},
        ParseCase{"a in ()", "a in ()", {{"a", ""}}, true}, ParseCase{"a in (b,)", "a in (,b)", {{"a", ""}}, true},
        ParseCase{"example.com/app=web", "example.com/app=web", {{"example.com/app", "web"}}, true}));

struct ParseErrorCase {
  const char* text;
  const char* mentions;
};

class SelectorParseErrorTest : public ::testing::TestWithParam<ParseErrorCase> {};

TEST_P(SelectorParseErrorTest, RejectsWithPositionAndToken) {
  const auto& c = GetParam();
  auto r = parseLabelSelector(c.text);
  ASSERT_FALSE(r.isOk()) << c.text << " parsed as " << r->toString();
  EXPECT_THAT(r.error(), HasSubstr(c.mentions)) << r.error();
}

INSTANTIATE_TEST_SUITE_P(
    Table, SelectorParseErrorTest,
    ::testing::Values(ParseErrorCase{"a Maybe b", "at position 2: found 'Maybe', expected: in, notin"},
                      ParseErrorCase{"a in (b", "found end of string, expected: ',' or ')'"},
                      ParseErrorCase{"a in b", "found 'b', expected: '('"}, ParseErrorCase{"a in (b c)", "found 'c'"},
                      ParseErrorCase{",a", "at position 0: found ','"},
                      ParseErrorCase{"a,", "found end of string, expected: identifier after ','"},
                      ParseErrorCase{"a=b=c", "found '=', expected: ',' or end of string"},
                      ParseErrorCase{"a=b c", "found 'c'"}, ParseErrorCase{"!a=b", "found '='"},
                      ParseErrorCase{"a>x", "must be an integer"}, ParseErrorCase{"a>", "must be an integer"},
                      ParseErrorCase{"a=(b)", "found '(', expected: identifier"},
                      ParseErrorCase{"-a=b", "invalid label key \"-a\""},
                      ParseErrorCase{"a/b/c=d", "invalid label key \"a/b/c\""},
                      ParseErrorCase{"a=-b", "invalid label value \"-b\""}, ParseErrorCase{"(", "found '('"},
                      // Like upstream, Gt/Lt values must also be label values, so negatives are rejected.
                      ParseErrorCase{"a>-3", "invalid label value \"-3\""},
                      ParseErrorCase{"!", "found end of string, expected: identifier"}));

TEST(SelectorParseTest, EqualityBecomesMatchLabelsAndOthersExpressions) {
  auto r = parseLabelSelector("app=web,tier!=db,zone in (b,a),x,!y,n>5");
  ASSERT_TRUE(r.isOk()) << r.error();
  const LabelSelector want{{{"app", "web"}},
                           {{"tier", LabelSelectorOp::NotIn, {"db"}},
                            {"zone", LabelSelectorOp::In, {"a", "b"}},
                            {"x", LabelSelectorOp::Exists, {}},
                            {"y", LabelSelectorOp::DoesNotExist, {}},
                            {"n", LabelSelectorOp::Gt, {"5"}}}};
  EXPECT_EQ(*r, want);
}

TEST(LabelSelectorTest, ToStringSortsByKey) {
  const LabelSelector s{{{"b", "c"}},
                        {{"a", LabelSelectorOp::In, {"y", "x"}},
                         {"d", LabelSelectorOp::DoesNotExist, {}},
                         {"e", LabelSelectorOp::Exists, {}},
                         {"f", LabelSelectorOp::NotIn, {"z"}},
                         {"g", LabelSelectorOp::Gt, {"5"}}}};
  EXPECT_EQ(s.toString(), "a in (x,y),b=c,!d,e,f!=z,g>5");
}

// --- validation --------------------------------------------------------------------------------

struct ValidateCase {
  const char* name;
  LabelSelector selector;
  const char* error;  // empty: valid
};

class ValidateSelectorTest : public ::testing::TestWithParam<ValidateCase> {};

TEST_P(ValidateSelectorTest, Validates) {
  const auto& c = GetParam();
  const Status s = validateLabelSelector(c.selector);
  if (std::string(c.error).empty()) {
    EXPECT_TRUE(s.isOk()) << c.name << ": " << s.message();
  } else {
    ASSERT_FALSE(s.isOk()) << c.name;
    EXPECT_THAT(s.message(), HasSubstr(c.error)) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ValidateSelectorTest,
    ::testing::Values(
        ValidateCase{"valid", {{{"app", "web"}}, {{"tier", LabelSelectorOp::In, {"a"}}}}, ""},
        ValidateCase{"empty", {}, ""},
        ValidateCase{"In without values",
                     {{}, {{"tier", LabelSelectorOp::In, {}}}},
                     "matchExpressions[0].values: must be specified when operator is In or NotIn"},
        ValidateCase{"NotIn without values", {{}, {{"tier", LabelSelectorOp::NotIn, {}}}}, "values: must be"},
        ValidateCase{"Exists with values",
                     {{}, {{"tier", LabelSelectorOp::Exists, {"a"}}}},
                     "matchExpressions[0].values: may not be specified"},
        ValidateCase{"Gt not legal",
                     {{}, {{"a", LabelSelectorOp::In, {"x"}}, {"n", LabelSelectorOp::Gt, {"1"}}}},
                     "matchExpressions[1].operator: \"Gt\" is not a valid selector operator"},
        ValidateCase{"bad key", {{}, {{"bad key", LabelSelectorOp::Exists, {}}}}, "matchExpressions[0].key"},
        ValidateCase{"bad value", {{}, {{"k", LabelSelectorOp::In, {"ok", "-bad"}}}}, "matchExpressions[0].values[1]"},
        ValidateCase{"bad matchLabels key", {{{"a/b/c", "x"}}, {}}, "matchLabels: invalid label key \"a/b/c\""},
        ValidateCase{"bad matchLabels value", {{{"a", "x y"}}, {}}, "invalid label value \"x y\""}));

TEST(ValidateSelectorTest, ReportsEveryProblem) {
  const Status s = validateLabelSelector({{}, {{"a", LabelSelectorOp::In, {}}, {"b", LabelSelectorOp::Lt, {"1"}}}});
  ASSERT_FALSE(s.isOk());
  EXPECT_THAT(s.message(), HasSubstr("matchExpressions[0].values"));
  EXPECT_THAT(s.message(), HasSubstr("matchExpressions[1].operator"));
}

TEST(LabelSelectorOpTest, ParsesApiNamesOnly) {
  EXPECT_EQ(*parseLabelSelectorOp("In"), LabelSelectorOp::In);
  EXPECT_EQ(*parseLabelSelectorOp("NotIn"), LabelSelectorOp::NotIn);
  EXPECT_EQ(*parseLabelSelectorOp("Exists"), LabelSelectorOp::Exists);
  EXPECT_EQ(*parseLabelSelectorOp("DoesNotExist"), LabelSelectorOp::DoesNotExist);
  EXPECT_EQ(parseLabelSelectorOp("Maybe").error(), "unknown operator \"Maybe\"");
  EXPECT_FALSE(parseLabelSelectorOp("Gt").isOk());
  EXPECT_FALSE(parseLabelSelectorOp("in").isOk());
}

TEST(LabelSyntaxTest, Keys) {
  const std::string name63(63, 'a');
  for (const std::string& ok : {std::string("app"), std::string("app.kubernetes.io/name"), std::string("a_b.c-D"),
                                std::string("k8s.io/x"), name63, std::string("A")}) {
    EXPECT_TRUE(isValidLabelKey(ok)) << ok;
  }
  for (const std::string& bad :
       {std::string(""), std::string("-a"), std::string("a-"), std::string("a b"), std::string("/a"), std::string("a/"),
        std::string("a/b/c"), std::string("Example.com/a"), std::string("ex_ample.com/a"), name63 + "a",
        std::string(254, 'a') + "/x"}) {
    EXPECT_FALSE(isValidLabelKey(bad)) << bad;
  }
}

TEST(LabelSyntaxTest, Values) {
  for (const std::string& ok : {std::string(""), std::string("a"), std::string("v1.2_3-x"), std::string(63, 'z')}) {
    EXPECT_TRUE(isValidLabelValue(ok)) << ok;
  }
  for (const std::string& bad :
       {std::string("-a"), std::string("a."), std::string("a b"), std::string("a/b"), std::string(64, 'z')}) {
    EXPECT_FALSE(isValidLabelValue(bad)) << bad;
  }
}

TEST(LabelSyntaxTest, Int64AsGtLtReadIt) {
  EXPECT_EQ(parseLabelInt64("5"), 5);
  EXPECT_EQ(parseLabelInt64("+5"), 5);
  EXPECT_EQ(parseLabelInt64("-5"), -5);
  EXPECT_EQ(parseLabelInt64("007"), 7);
  EXPECT_EQ(parseLabelInt64("9223372036854775807"), 9223372036854775807);
  for (const char* bad : {"", " 5", "5 ", "5x", "+-5", "+", "9223372036854775808", "1.0"}) {
    EXPECT_FALSE(parseLabelInt64(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace kdesched::api
