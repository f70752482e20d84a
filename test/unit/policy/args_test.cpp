#include "pkg/policy/args.h"

#include "pkg/policy/detail/yaml_value.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace kdesched::policy {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kPath = "profiles[0].pluginConfig[1].args";

ArgsReader readerFor(const std::string& yaml) { return ArgsReader(detail::rawArgs(YAML::Load(yaml), kPath)); }

// ---------------------------------------------------------------------------------------------
// Scalar accessors: one table per type, each row a YAML value and either the decoded value or the
// exact error.

struct BoolCase {
  std::string yaml;
  std::optional<bool> want;
  std::string error;
};

TEST(ArgsReaderTest, ReadBool) {
  const std::vector<BoolCase> cases = {
      {"v: true", true, ""},
      {"v: false", false, ""},
      {"v: True", true, ""},
      // go-yaml v2 (upstream's YAML reader) still resolves YAML 1.1 booleans.
      {"v: yes", true, ""},
      {"v: off", false, ""},
      {"v:", std::nullopt, ""},
      {"v: ~", std::nullopt, ""},
      {"other: 1", std::nullopt, ""},
      {"v: \"true\"", std::nullopt, std::string(kPath) + ".v: must be true or false, got \"true\""},
      {"v: 1", std::nullopt, std::string(kPath) + ".v: must be true or false, got 1"},
      {"v: maybe", std::nullopt, std::string(kPath) + ".v: must be true or false, got \"maybe\""},
      {"v: [true]", std::nullopt, std::string(kPath) + ".v: must be true or false, got a list"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<bool> got;
    Status st = r.readBool("v", got);
    if (c.error.empty()) {
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_EQ(st.message(), c.error);
      EXPECT_FALSE(got.has_value());
    }
  }
}

struct IntCase {
  std::string yaml;
  std::optional<std::int64_t> want;
  std::string error;  // suffix after "<path>.v: "
};

TEST(ArgsReaderTest, ReadInt64) {
  const std::vector<IntCase> cases = {
      {"v: 0", 0, ""},
      {"v: -42", -42, ""},
      {"v: +7", 7, ""},
      {"v: 1_000", 1000, ""},
      {"v: 9223372036854775807", INT64_MAX, ""},
      // go-yaml reads 5.0 as a float, which JSON writes as 5: upstream accepts it as an integer.
      {"v: 5.0", 5, ""},
      {"v: 1e3", 1000, ""},
      {"v: 1.5", std::nullopt, "must be an integer, got 1.5"},
      {"v: \"5\"", std::nullopt, "must be an integer, got \"5\""},
      {"v: abc", std::nullopt, "must be an integer, got \"abc\""},
      {"v: true", std::nullopt, "must be an integer, got true"},
      {"v: {a: 1}", std::nullopt, "must be an integer, got a mapping"},
      {"v: 9223372036854775808", std::nullopt, "must fit in a 64-bit integer, got 9223372036854775808"},
      {"v: .inf", std::nullopt, "must be an integer, got .inf"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<std::int64_t> got;
    Status st = r.readInt64("v", got);
    if (c.error.empty()) {
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_EQ(st.message(), std::string(kPath) + ".v: " + c.error);
    }
  }
}

// Every notation upstream's YAML reader takes for an integer (api/yaml_scalar.h has the table).
TEST(ArgsReaderTest, ReadInt64TakesUpstreamsNotations) {
  const std::vector<IntCase> cases = {
      {"v: 0x1F", 31, ""},
      {"v: -0x10", -16, ""},
      {"v: 0o17", 15, ""},
      {"v: 017", 15, ""},  // a leading 0 is octal, as strconv.ParseInt(s, 0, 64) reads it
      {"v: 0b101", 5, ""},
      {"v: 08", 8, ""},  // not octal: go-yaml reads it as the float 8
      {"v: -9223372036854775808", INT64_MIN, ""},
      {"v: -9223372036854775809", std::nullopt, "must fit in a 64-bit integer, got -9223372036854775809"},
      {"v: 18446744073709551615", std::nullopt, "must fit in a 64-bit integer, got 18446744073709551615"},
      {"v: !!str 0x1F", std::nullopt, "must be an integer, got \"0x1F\""},
      {"v: 0x", std::nullopt, "must be an integer, got \"0x\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<std::int64_t> got;
    Status st = r.readInt64("v", got);
    if (c.error.empty()) {
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_EQ(st.message(), std::string(kPath) + ".v: " + c.error);
    }
  }
  std::optional<double> tiny, hex;
  ArgsReader r = readerFor("tiny: 1e-400\nhex: 0x10\n");
  ASSERT_TRUE(r.readDouble("tiny", tiny).isOk());
  EXPECT_EQ(tiny, 0.0);  // underflow reads as zero, as strconv.ParseFloat does
  ASSERT_TRUE(r.readDouble("hex", hex).isOk());
  EXPECT_EQ(hex, 16.0);
}

TEST(ArgsReaderTest, ReadInt32) {
  const std::vector<IntCase> cases = {
      {"v: 2147483647", 2147483647, ""},
      {"v: -2147483648", -2147483648LL, ""},
      {"v: 2147483648", std::nullopt, "must be between -2147483648 and 2147483647, got 2147483648"},
      {"v: x", std::nullopt, "must be an integer, got \"x\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<std::int32_t> got;
    Status st = r.readInt32("v", got);
    if (c.error.empty()) {
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_EQ(st.message(), std::string(kPath) + ".v: " + c.error);
    }
  }
}

TEST(ArgsReaderTest, ReadUint32RejectsNegatives) {
  const std::vector<IntCase> cases = {
      {"v: 0", 0, ""},
      {"v: 4294967295", 4294967295LL, ""},
      {"v: -1", std::nullopt, "must be a non-negative integer, got -1"},
      {"v: -1.0", std::nullopt, "must be a non-negative integer, got -1.0"},
      {"v: -99999999999999999999", std::nullopt, "must be a non-negative integer, got -99999999999999999999"},
      // Upstream's Go uint takes up to 2^64-1; no count or age reaches 2^32-1, which is held.
      {"v: 4294967296", 4294967295LL, ""},
      {"v: 18446744073709551615", 4294967295LL, ""},
      {"v: 1.0e19", 4294967295LL, ""},
      {"v: 18446744073709551616", std::nullopt, "must be at most 18446744073709551615, got 18446744073709551616"},
      {"v: ten", std::nullopt, "must be a non-negative integer, got \"ten\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<std::uint32_t> got;
    Status st = r.readUint32("v", got);
    if (c.error.empty()) {
      ASSERT_TRUE(st.isOk()) << st.message();
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(static_cast<std::int64_t>(*got), *c.want);
    } else {
      EXPECT_EQ(st.message(), std::string(kPath) + ".v: " + c.error);
    }
  }
}

TEST(ArgsReaderTest, ReadDouble) {
  struct Case {
    std::string yaml;
    std::optional<double> want;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"v: 20", 20.0, ""},
      {"v: 12.5", 12.5, ""},
      {"v: -0.5", -0.5, ""},
      {"v: .5", 0.5, ""},
      {"v: 1e2", 100.0, ""},
      {"v: \"20\"", std::nullopt, "must be a number, got \"20\""},
      {"v: 20%", std::nullopt, "must be a number, got \"20%\""},
      {"v: .nan", std::nullopt, "must be a finite number, got .nan"},
      {"v: -.inf", std::nullopt, "must be a finite number, got -.inf"},
      {"v: 1e999", std::nullopt, "must be a finite number, got 1e999"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<double> got;
    Status st = r.readDouble("v", got);
    if (c.error.empty()) {
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_EQ(st.message(), std::string(kPath) + ".v: " + c.error);
    }
  }
}

TEST(ArgsReaderTest, ReadString) {
  struct Case {
    std::string yaml;
    std::optional<std::string> want;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"v: Mandatory", "Mandatory", ""},
      {"v: \"Mandatory\"", "Mandatory", ""},
      {"v: ''", "", ""},
      {"v: \"5\"", "5", ""},
      {"v: !!str 5", "5", ""},
      {"v: |\n  two\n  lines\n", "two\nlines\n", ""},
      {"v: 5m", "5m", ""},
      // Upstream reads a plain 5 or true as a number or a boolean and fails to put it in a string.
      {"v: 5", std::nullopt, "must be a string (quote it: \"5\"), got 5"},
      {"v: on", std::nullopt, "must be a string (quote it: \"on\"), got on"},
      {"v: [a]", std::nullopt, "must be a string, got a list"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<std::string> got;
    Status st = r.readString("v", got);
    if (c.error.empty()) {
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_EQ(st.message(), std::string(kPath) + ".v: " + c.error);
    }
  }
}

TEST(ArgsReaderTest, ReadStringList) {
  ArgsReader r = readerFor("a: [x, \"y\"]\nb: []\nc: x\nd: [x, 7]\ne: [x, ~]\nf:\n");
  std::optional<std::vector<std::string>> a, b, c, d, e, f;
  ASSERT_TRUE(r.readStringList("a", a).isOk());
  EXPECT_EQ(a, (std::vector<std::string>{"x", "y"}));
  ASSERT_TRUE(r.readStringList("b", b).isOk());
  EXPECT_EQ(b, std::vector<std::string>{});
  EXPECT_EQ(r.readStringList("c", c).message(), std::string(kPath) + ".c: must be a list of strings, got \"x\"");
  EXPECT_EQ(r.readStringList("d", d).message(),
            std::string(kPath) + ".d[1]: must be a string (quote it: \"7\"), got 7");
  EXPECT_EQ(r.readStringList("e", e).message(), std::string(kPath) + ".e[1]: must be a string, got null");
  ASSERT_TRUE(r.readStringList("f", f).isOk());
  EXPECT_FALSE(f.has_value());
  EXPECT_TRUE(r.finish().isOk());
}

TEST(ArgsReaderTest, ReadDurationUsesGoSyntax) {
  struct Case {
    std::string text;
    std::optional<double> seconds;
  };
  const std::vector<Case> cases = {
      {"300ms", 0.3},
      {"1.5h", 5400},
      {"2h45m", 9900},
      {"0", 0},
      {"\"0\"", 0},
      {"90s", 90},
      {"5m", 300},
      {"1h30m", 5400},
      {"-1m", -60},
      {"+2s", 2},
      {".5s", 0.5},
      {"5.s", 5},
      {"1us", 1e-6},
      {"1µs", 1e-6},
      {"1ns", 1e-9},
      {"1h1m1s1ms", 3661.001},
      {"\"\"", std::nullopt},
      {"abc", std::nullopt},
      {"300", std::nullopt},
      {"1x", std::nullopt},
      {"s", std::nullopt},
      {".s", std::nullopt},
      {"1.5", std::nullopt},
      {"+-5s", std::nullopt},
      {"5 m", std::nullopt},
      {"3000000h", std::nullopt},  // above Go's ~292-year limit
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    ArgsReader r = readerFor("v: " + c.text);
    std::optional<double> got;
    Status st = r.readDuration("v", got);
    if (c.seconds) {
      ASSERT_TRUE(st.isOk()) << st.message();
      ASSERT_TRUE(got.has_value());
      EXPECT_NEAR(*got, *c.seconds, 1e-9);
    } else {
      EXPECT_THAT(st.message(), StartsWith(std::string(kPath) +
                                           ".v: must be a duration such as \"300ms\", \"1.5h\" or \"2h45m\", got "));
    }
  }
  ArgsReader r = readerFor("v: abc");
  std::optional<double> got;
  EXPECT_EQ(r.readDuration("v", got).message(),
            std::string(kPath) + ".v: must be a duration such as \"300ms\", \"1.5h\" or \"2h45m\", got \"abc\"");
}

// ---------------------------------------------------------------------------------------------
// Strictness: type errors with paths, unknown keys, duplicate keys, structure.

TEST(ArgsReaderTest, ThresholdTypeErrorNamesTheResource) {
  ArgsReader r = readerFor("thresholds:\n  cpu: abc\n  memory: 20\n");
  std::optional<ResourceThresholds> t;
  EXPECT_EQ(r.readResourceThresholds("thresholds", t).message(),
            "profiles[0].pluginConfig[1].args.thresholds.cpu: must be a number, got \"abc\"");
}

TEST(ArgsReaderTest, ReadResourceThresholds) {
  ArgsReader r = readerFor("thresholds:\n  cpu: 20\n  memory: 12.5\n  nvidia.com/gpu: 50\n  pods: 20\n");
  std::optional<ResourceThresholds> t;
  ASSERT_TRUE(r.readResourceThresholds("thresholds", t).isOk());
  EXPECT_EQ(t, (ResourceThresholds{{"cpu", 20}, {"memory", 12.5}, {"nvidia.com/gpu", 50}, {"pods", 20}}));

  const std::vector<std::pair<std::string, std::string>> errors = {
      {"thresholds: [cpu]", ".thresholds: must be a mapping, got a list"},
      {"thresholds: {cpu: ~}", ".thresholds.cpu: must be a number, got null"},
      {"thresholds: {nvidia.com/gpu: x}", ".thresholds[\"nvidia.com/gpu\"]: must be a number, got \"x\""},
      {"thresholds:\n  cpu: 1\n  cpu: 2\n", ".thresholds.cpu: duplicate key, set on line 2 and again on line 3"},
  };
  for (const auto& [yaml, error] : errors) {
    SCOPED_TRACE(yaml);
    ArgsReader e = readerFor(yaml);
    std::optional<ResourceThresholds> got;
    EXPECT_EQ(e.readResourceThresholds("thresholds", got).message(), kPath + error);
  }
}

TEST(ArgsReaderTest, UnknownKeySuggestsTheClosestField) {
  struct Case {
    std::string yaml;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"tresholds: {}", ".tresholds: unknown field \"tresholds\" (did you mean \"thresholds\"?)"},
      {"Thresholds: {}", ".Thresholds: unknown field \"Thresholds\" (did you mean \"thresholds\"?)"},
      {"targetThreshold: {}",
       ".targetThreshold: unknown field \"targetThreshold\" (did you mean \"targetThresholds\"?)"},
      {"useDeviation: true",
       ".useDeviation: unknown field \"useDeviation\" (known fields: thresholds, targetThresholds, numberOfNodes)"},
      {"x: 1", ".x: unknown field \"x\" (known fields: thresholds, targetThresholds, numberOfNodes)"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.yaml);
    ArgsReader r = readerFor(c.yaml);
    std::optional<ResourceThresholds> t, tt;
    std::optional<std::int32_t> n;
    ASSERT_TRUE(r.readResourceThresholds("thresholds", t).isOk());
    ASSERT_TRUE(r.readResourceThresholds("targetThresholds", tt).isOk());
    ASSERT_TRUE(r.readInt32("numberOfNodes", n).isOk());
    EXPECT_EQ(r.finish().message(), kPath + c.error);
  }
}

TEST(ArgsReaderTest, ObjectWithoutFieldsSaysSo) {
  ArgsReader r = readerFor("foo: 1");
  EXPECT_EQ(r.finish().message(), std::string(kPath) + ".foo: unknown field \"foo\" (this object takes no fields)");
  ArgsReader merge = readerFor("base: &b {x: 1}\nargs:\n  <<: *b\n");
  EXPECT_EQ(merge
                .readObject("args",
                            [](ArgsReader& a) {
                              std::optional<std::int64_t> x;
                              return a.readInt64("x", x);
                            })
                .message(),
            std::string(kPath) + ".args[\"<<\"]: YAML merge keys are not supported: write the fields out in full");
}

TEST(ArgsReaderTest, DuplicateKeysAreErrors) {
  ArgsReader r = readerFor("numberOfNodes: 1\nthresholds: {}\nnumberOfNodes: 2\n");
  std::string want = std::string(kPath) + ".numberOfNodes: duplicate key, set on line 1 and again on line 3";
  EXPECT_EQ(r.structural().message(), want);
  std::optional<std::int32_t> n;
  EXPECT_EQ(r.readInt32("numberOfNodes", n).message(), want);
  EXPECT_EQ(r.finish().message(), want);

  // A quoted and a plain spelling are the same key.
  ArgsReader quoted = readerFor("a: 1\n\"a\": 2\n");
  EXPECT_EQ(quoted.structural().message(), std::string(kPath) + ".a: duplicate key, set on line 1 and again on line 2");
}

TEST(ArgsReaderTest, StructuralErrors) {
  ArgsReader list = readerFor("[a, b]");
  EXPECT_EQ(list.structural().message(), std::string(kPath) + ": must be a mapping, got a list");
  std::optional<bool> b;
  EXPECT_EQ(list.readBool("x", b).message(), std::string(kPath) + ": must be a mapping, got a list");

  ArgsReader scalar = readerFor("hello");
  EXPECT_EQ(scalar.finish().message(), std::string(kPath) + ": must be a mapping, got \"hello\"");

  ArgsReader complexKey = readerFor("? [a, b]\n: 1\n");
  EXPECT_EQ(complexKey.structural().message(),
            std::string(kPath) + ": mapping keys must be strings, got a list on line 1");

  // No args at all reads as an empty mapping.
  ArgsReader absent(RawArgs{.path = kPath});
  EXPECT_TRUE(absent.structural().isOk());
  std::optional<std::int64_t> n;
  EXPECT_TRUE(absent.readInt64("x", n).isOk());
  EXPECT_FALSE(n.has_value());
  EXPECT_TRUE(absent.finish().isOk());

  RawArgs raw = RawArgs::fromYaml("x: 1", "profiles[2].pluginConfig[0].args").value();
  ArgsReader fromRaw(raw);
  EXPECT_EQ(fromRaw.path(), "profiles[2].pluginConfig[0].args");
  EXPECT_EQ(fromRaw.finish().message(),
            "profiles[2].pluginConfig[0].args.x: unknown field \"x\" (this object takes no fields)");
}

TEST(ArgsReaderTest, HasAndPaths) {
  ArgsReader r = readerFor("a: 1\nb: ~\nc:\n");
  EXPECT_TRUE(r.has("a"));
  EXPECT_FALSE(r.has("b"));
  EXPECT_FALSE(r.has("c"));
  EXPECT_FALSE(r.has("d"));
  EXPECT_EQ(r.pathOf("a"), std::string(kPath) + ".a");
  EXPECT_EQ(r.pathOf("app.kubernetes.io/name"), std::string(kPath) + "[\"app.kubernetes.io/name\"]");
  EXPECT_EQ(r.error("a", "bad").message(), std::string(kPath) + ".a: bad");
  ArgsReader top(RawArgs::fromYaml("a: 1", "").value());
  EXPECT_EQ(top.pathOf("a"), "a");
}

TEST(ArgsReaderTest, ReadObjectAndObjectList) {
  ArgsReader r = readerFor(
      "evictionLimits:\n  node: 3\n"
      "conditions:\n  - type: Ready\n    status: \"False\"\n  - type: PodScheduled\n"
      "empty:\n");
  std::optional<std::uint32_t> node;
  bool present = false;
  ASSERT_TRUE(r.readObject(
                   "evictionLimits", [&](ArgsReader& o) { return o.readUint32("node", node); }, &present)
                  .isOk());
  EXPECT_TRUE(present);
  EXPECT_EQ(node, 3u);

  std::vector<std::string> types;
  ASSERT_TRUE(r.readObjectList("conditions", [&](ArgsReader& o, std::size_t i) {
                 std::optional<std::string> type, status;
                 if (Status s = o.readString("type", type); !s) return s;
                 if (Status s = o.readString("status", status); !s) return s;
                 types.push_back(std::to_string(i) + ":" + type.value_or(""));
                 return Status::ok();
               }).isOk());
  EXPECT_EQ(types, (std::vector<std::string>{"0:Ready", "1:PodScheduled"}));

  bool emptyPresent = true;
  bool called = false;
  ASSERT_TRUE(r.readObject(
                   "empty",
                   [&](ArgsReader&) {
                     called = true;
                     return Status::ok();
                   },
                   &emptyPresent)
                  .isOk());
  EXPECT_FALSE(emptyPresent);
  EXPECT_FALSE(called);
  EXPECT_TRUE(r.finish().isOk());
}

TEST(ArgsReaderTest, NestedReadersAreFinishedAutomatically) {
  ArgsReader r = readerFor("evictionLimits:\n  nod: 3\nconditions:\n  - {type: Ready, reason: x}\n");
  std::optional<std::uint32_t> node;
  EXPECT_EQ(r.readObject("evictionLimits", [&](ArgsReader& o) { return o.readUint32("node", node); }).message(),
            std::string(kPath) + ".evictionLimits.nod: unknown field \"nod\" (did you mean \"node\"?)");
  EXPECT_EQ(r.readObjectList("conditions",
                             [&](ArgsReader& o, std::size_t) {
                               std::optional<std::string> type, status;
                               if (Status s = o.readString("type", type); !s) return s;
                               return o.readString("status", status);
                             })
                .message(),
            std::string(kPath) + ".conditions[0].reason: unknown field \"reason\" (known fields: type, status)");

  ArgsReader wrongShapes = readerFor("evictionLimits: 3\nconditions: {type: Ready}\nitems: [1]\n");
  EXPECT_EQ(wrongShapes.readObject("evictionLimits", [](ArgsReader&) { return Status::ok(); }).message(),
            std::string(kPath) + ".evictionLimits: must be a mapping, got 3");
  EXPECT_EQ(wrongShapes.readObjectList("conditions", [](ArgsReader&, std::size_t) { return Status::ok(); }).message(),
            std::string(kPath) + ".conditions: must be a list, got a mapping");
  EXPECT_EQ(wrongShapes.readObjectList("items", [](ArgsReader&, std::size_t) { return Status::ok(); }).message(),
            std::string(kPath) + ".items[0]: must be a mapping, got 1");
}

TEST(ArgsReaderTest, ExceptionsInCallbacksBecomeErrors) {
  ArgsReader r = readerFor("o: {a: 1}");
  Status st = r.readObject("o", [](ArgsReader&) -> Status { throw std::runtime_error("boom"); });
  EXPECT_EQ(st.message(), std::string(kPath) + ".o: internal error while reading: boom");
}

}  // namespace
}  // namespace kdesched::policy
