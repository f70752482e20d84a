// The args reader's shared arg types: namespaces and label selectors, as upstream reads them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/policy/args.h"
#include "pkg/policy/detail/yaml_value.h"

namespace kdesched::policy {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kPath = "profiles[0].pluginConfig[1].args";

ArgsReader readerFor(const std::string& yaml) { return ArgsReader(detail::rawArgs(YAML::Load(yaml), kPath)); }

// ---------------------------------------------------------------------------------------------
// Shared arg types.

TEST(ArgsReaderTest, ReadNamespaces) {
  ArgsReader r = readerFor("include: {include: [a, b]}\nexclude: {exclude: [kube-system]}\nnone: {}\n");
  std::optional<Namespaces> include, exclude, none, absent;
  ASSERT_TRUE(r.readNamespaces("include", include).isOk());
  ASSERT_TRUE(r.readNamespaces("exclude", exclude).isOk());
  ASSERT_TRUE(r.readNamespaces("none", none).isOk());
  ASSERT_TRUE(r.readNamespaces("absent", absent).isOk());
  EXPECT_EQ(include, (Namespaces{{"a", "b"}, {}}));
  EXPECT_EQ(exclude, (Namespaces{{}, {"kube-system"}}));
  EXPECT_EQ(none, Namespaces{});
  EXPECT_FALSE(absent.has_value());

  const std::vector<std::pair<std::string, std::string>> errors = {
      {"namespaces: {include: [a], exclude: [b]}", ".namespaces: only one of Include/Exclude namespaces can be set"},
      {"namespaces: {includes: [a]}", ".namespaces.includes: unknown field \"includes\" (did you mean \"include\"?)"},
      {"namespaces: [a]", ".namespaces: must be a mapping, got a list"},
      {"namespaces: {include: a}", ".namespaces.include: must be a list of strings, got \"a\""},
  };
  for (const auto& [yaml, error] : errors) {
    SCOPED_TRACE(yaml);
    ArgsReader e = readerFor(yaml);
    std::optional<Namespaces> got;
    EXPECT_EQ(e.readNamespaces("namespaces", got).message(), kPath + error);
  }
  // Both keys present but one empty is fine upstream (it checks lengths).
  ArgsReader oneEmpty = readerFor("namespaces: {include: [a], exclude: []}");
  std::optional<Namespaces> got;
  EXPECT_TRUE(oneEmpty.readNamespaces("namespaces", got).isOk());
}

TEST(NamespacesTest, Allows) {
  Namespaces all;
  EXPECT_TRUE(all.allows("default"));
  Namespaces include{{"a", "b"}, {}};
  EXPECT_TRUE(include.allows("a"));
  EXPECT_FALSE(include.allows("c"));
  Namespaces exclude{{}, {"kube-system"}};
  EXPECT_FALSE(exclude.allows("kube-system"));
  EXPECT_TRUE(exclude.allows("default"));
}

TEST(ArgsReaderTest, ReadLabelSelector) {
  ArgsReader r = readerFor(
      "labelSelector:\n"
      "  matchLabels:\n"
      "    tier: web\n"
      "    app: shop\n"
      "  matchExpressions:\n"
      "    - {key: zone, operator: In, values: [a, b]}\n"
      "    - key: legacy\n"
      "      operator: DoesNotExist\n"
      "empty: {}\n");
  std::optional<api::LabelSelector> sel, empty, absent;
  ASSERT_TRUE(r.readLabelSelector("labelSelector", sel).isOk());
  ASSERT_TRUE(sel.has_value());
  EXPECT_EQ(sel->matchLabels, (std::vector<std::pair<std::string, std::string>>{{"app", "shop"}, {"tier", "web"}}));
  ASSERT_EQ(sel->matchExpressions.size(), 2u);
  EXPECT_EQ(sel->matchExpressions[0], (api::LabelSelectorRequirement{"zone", api::LabelSelectorOp::In, {"a", "b"}}));
  EXPECT_EQ(sel->matchExpressions[1],
            (api::LabelSelectorRequirement{"legacy", api::LabelSelectorOp::DoesNotExist, {}}));
  ASSERT_TRUE(r.readLabelSelector("empty", empty).isOk());
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(r.readLabelSelector("absent", absent).isOk());
  EXPECT_FALSE(absent.has_value());
  EXPECT_TRUE(r.finish().isOk());
}

TEST(ArgsReaderTest, LabelSelectorErrors) {
  const std::vector<std::pair<std::string, std::string>> errors = {
      {"s: {matchExpressions: [{key: a, operator: Maybe, values: [x]}]}",
       ".s.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, got \"Maybe\""},
      {"s: {matchExpressions: [{key: a, operator: Gt, values: [\"1\"]}]}",
       ".s.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, got \"Gt\""},
      {"s: {matchExpressions: [{key: a}]}",
       ".s.matchExpressions[0].operator: must be one of In, NotIn, Exists, DoesNotExist, got null"},
      {"s: {matchExpressions: [{key: a, operator: In, value: [x]}]}",
       ".s.matchExpressions[0].value: unknown field \"value\" (did you mean \"values\"?)"},
      {"s: {matchLabel: {a: b}}", ".s.matchLabel: unknown field \"matchLabel\" (did you mean \"matchLabels\"?)"},
      {"s: {matchLabels: {version: 2}}", ".s.matchLabels.version: must be a string (quote it: \"2\"), got 2"},
      {"s: {matchLabels: {a: {b: c}}}", ".s.matchLabels.a: must be a string, got a mapping"},
      {"s: {matchLabels: [a]}", ".s.matchLabels: must be a mapping, got a list"},
      {"s: {matchLabels: {a: x, a: y}}", ".s.matchLabels.a: duplicate key, set on line 1 and again on line 1"},
      {"s: app=web", ".s: must be a mapping, got \"app=web\""},
  };
  for (const auto& [yaml, error] : errors) {
    SCOPED_TRACE(yaml);
    ArgsReader r = readerFor(yaml);
    std::optional<api::LabelSelector> got;
    EXPECT_EQ(r.readLabelSelector("s", got).message(), kPath + error);
    EXPECT_FALSE(got.has_value());
  }
}

TEST(ArgsReaderTest, LabelSelectorIsValidated) {
  // The validator's wording belongs to pkg/api; here only that the error is located.
  ArgsReader r = readerFor("s: {matchExpressions: [{key: a, operator: In}]}");
  std::optional<api::LabelSelector> got;
  Status st = r.readLabelSelector("s", got);
  ASSERT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), StartsWith(std::string(kPath) + ".s"));
  EXPECT_THAT(st.message(), HasSubstr("matchExpressions[0]"));
  EXPECT_FALSE(got.has_value());
}

}  // namespace
}  // namespace kdesched::policy
