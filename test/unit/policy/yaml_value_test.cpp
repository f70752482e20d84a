#include "pkg/policy/detail/yaml_value.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace kdesched::policy {
namespace {

using detail::describeValue;
using ::testing::HasSubstr;

TEST(RawArgsTest, FromYamlKeepsTheNodeAndThePath) {
  auto raw = RawArgs::fromYaml("a: 1\nb: [x]\n", "profiles[0].pluginConfig[0].args");
  ASSERT_TRUE(raw.isOk()) << raw.error();
  EXPECT_TRUE(raw->isSet());
  EXPECT_EQ(raw->path, "profiles[0].pluginConfig[0].args");
  EXPECT_TRUE(detail::yamlOf(*raw).IsMap());
  EXPECT_EQ(detail::yamlOf(*raw)["b"][0].Scalar(), "x");
}

TEST(RawArgsTest, EmptyAndNullAreUnset) {
  for (const char* yaml : {"", "~", "null", "# only a comment\n"}) {
    auto raw = RawArgs::fromYaml(yaml, "args");
    ASSERT_TRUE(raw.isOk()) << yaml << ": " << raw.error();
    EXPECT_FALSE(raw->isSet()) << yaml;
  }
  EXPECT_FALSE(RawArgs{}.isSet());
  EXPECT_TRUE(detail::yamlOf(RawArgs{}).IsNull() || !detail::yamlOf(RawArgs{}).IsDefined());
}

TEST(RawArgsTest, MalformedYamlIsAnErrorNamingThePlace) {
  auto bad = RawArgs::fromYaml("a: [1, 2\n", "args");
  ASSERT_FALSE(bad.isOk());
  EXPECT_THAT(bad.error(), HasSubstr("args: invalid YAML at line"));
  // The input on which yaml-cpp 0.7 loops forever is refused, not loaded.
  auto stuck = RawArgs::fromYaml(",", "args");
  ASSERT_FALSE(stuck.isOk());
  EXPECT_THAT(stuck.error(), HasSubstr("line 1, column 1"));
}

TEST(ScalarOfTest, QuotedBlockAndStrTaggedScalarsAreStrings) {
  const YAML::Node doc = YAML::Load(
      "plain: 5\nquoted: \"5\"\nsingle: '5'\nblock: |\n  5\nstr: !!str 5\nint: !!int 5\ncustom: !mine 5\n"
      "hex: 0x1F\n");
  auto type = [&](const char* key) { return detail::scalarOf(doc[key]).type; };
  EXPECT_EQ(type("plain"), api::ScalarType::Int);
  EXPECT_EQ(type("quoted"), api::ScalarType::String);
  EXPECT_EQ(type("single"), api::ScalarType::String);
  EXPECT_EQ(type("block"), api::ScalarType::String);
  EXPECT_EQ(type("str"), api::ScalarType::String);
  EXPECT_EQ(type("int"), api::ScalarType::Int);
  EXPECT_EQ(type("custom"), api::ScalarType::String);
  EXPECT_EQ(detail::scalarOf(doc["hex"]).int64, 31);
  EXPECT_EQ(type("missing"), api::ScalarType::Null);
}

TEST(DescribeValueTest, Values) {
  YAML::Node doc = YAML::Load(
      "s: abc\nq: \"5\"\ni: -1\nf: 1.5\nb: true\nn: ~\nl: [1]\nm: {a: 1}\n"
      "ctl: \"a\\x01b\\n\"\nlong: " +
      std::string(100, 'x') +
      "\nutf8: µs\n"
      "bin: '\xff"
      "'\n");
  auto d = [&](const char* k) {
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (it->first.Scalar() == k) return describeValue(it->second);
    }
    return std::string("<missing>");
  };
  EXPECT_EQ(d("s"), "\"abc\"");
  EXPECT_EQ(d("q"), "\"5\"");
  EXPECT_EQ(d("i"), "-1");
  EXPECT_EQ(d("f"), "1.5");
  EXPECT_EQ(d("b"), "true");
  EXPECT_EQ(d("n"), "null");
  EXPECT_EQ(d("l"), "a list");
  EXPECT_EQ(d("m"), "a mapping");
  EXPECT_EQ(d("ctl"), "\"a\\x01b\\n\"");
  EXPECT_EQ(d("long"), "\"" + std::string(64, 'x') + "...\"");
  EXPECT_EQ(d("utf8"), "\"µs\"");
  EXPECT_EQ(describeValue(YAML::Node()), "null");
  // Cutting a long value never splits a multi-byte character.
  std::string mu;
  for (int i = 0; i < 40; ++i) mu += "µ";  // 2 bytes each
  EXPECT_EQ(describeValue(YAML::Node(std::string("x") + mu)), "\"x" + mu.substr(0, 62) + "...\"");
  EXPECT_EQ(describeValue(YAML::Node(mu)), "\"" + mu.substr(0, 64) + "...\"");
  std::string bin = d("bin");
  EXPECT_TRUE(std::all_of(bin.begin(), bin.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) << bin;
}

}  // namespace
}  // namespace kdesched::policy
