#include "pkg/api/yaml_scalar.h"

#include <gtest/gtest.h>

#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace kdesched::api {
namespace {

// A resolved scalar as one short text, so each table row reads like the header's table.
std::string show(const PlainScalar& s) {
  switch (s.type) {
    case ScalarType::Null: return "null";
    case ScalarType::Bool: return s.boolean ? "bool true" : "bool false";
    case ScalarType::Int: return s.aboveInt64 ? "uint " + std::to_string(s.uint64) : "int " + std::to_string(s.int64);
    case ScalarType::Float: {
      if (s.outOfRange) return std::string("float out of range ") + (s.real < 0 ? "-" : "+");
      if (std::isnan(s.real)) return "float nan";
      std::array<char, 64> buf{};
      const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), s.real);
      return "float " + std::string(buf.data(), res.ptr);
    }
    case ScalarType::String: return "string";
  }
  return "?";
}

struct ScalarCase {
  const char* text;
  const char* want;
};

class YamlScalarResolveTest : public ::testing::TestWithParam<ScalarCase> {};

TEST_P(YamlScalarResolveTest, TypesLikeSigsK8sYaml) {
  const auto& c = GetParam();
  EXPECT_EQ(show(resolvePlainScalar(c.text)), c.want) << '"' << c.text << '"';
}

// Each row is what sigs.k8s.io/yaml v1.4.0 makes of `v: <text>` (see yaml_scalar.h), except the
// out-of-range floats, which it keeps as strings.
INSTANTIATE_TEST_SUITE_P(
    NullAndBool, YamlScalarResolveTest,
    ::testing::Values(ScalarCase{"", "null"}, ScalarCase{"~", "null"}, ScalarCase{"null", "null"},
                      ScalarCase{"Null", "null"}, ScalarCase{"NULL", "null"}, ScalarCase{"nULL", "string"},
                      ScalarCase{"true", "bool true"}, ScalarCase{"True", "bool true"}, ScalarCase{"TRUE", "bool true"},
                      ScalarCase{"tRUE", "string"}, ScalarCase{"yes", "bool true"}, ScalarCase{"Yes", "bool true"},
                      ScalarCase{"YES", "bool true"}, ScalarCase{"yEs", "string"}, ScalarCase{"y", "bool true"},
                      ScalarCase{"Y", "bool true"}, ScalarCase{"on", "bool true"}, ScalarCase{"On", "bool true"},
                      ScalarCase{"ON", "bool true"}, ScalarCase{"false", "bool false"}, ScalarCase{"no", "bool false"},
                      ScalarCase{"n", "bool false"}, ScalarCase{"N", "bool false"}, ScalarCase{"off", "bool false"},
                      ScalarCase{"Off", "bool false"}, ScalarCase{"OFF", "bool false"}));

INSTANTIATE_TEST_SUITE_P(
    Integers, YamlScalarResolveTest,
    ::testing::Values(ScalarCase{"42", "int 42"}, ScalarCase{"+1", "int 1"}, ScalarCase{"-1", "int -1"},
                      ScalarCase{"+0", "int 0"}, ScalarCase{"-0", "int 0"}, ScalarCase{"1_000", "int 1000"},
                      ScalarCase{"1__0", "int 10"}, ScalarCase{"1_", "int 1"}, ScalarCase{"0_0", "int 0"},
                      ScalarCase{"_1", "string"}, ScalarCase{"0x1F", "int 31"}, ScalarCase{"0X1F", "int 31"},
                      ScalarCase{"-0x1F", "int -31"}, ScalarCase{"0x_1F", "int 31"}, ScalarCase{"0o17", "int 15"},
                      ScalarCase{"017", "int 15"}, ScalarCase{"0017", "int 15"}, ScalarCase{"-017", "int -15"},
                      ScalarCase{"+017", "int 15"}, ScalarCase{"0777", "int 511"}, ScalarCase{"00", "int 0"},
                      ScalarCase{"0b101", "int 5"}, ScalarCase{"-0b101", "int -5"}, ScalarCase{"+0b101", "int 5"},
                      ScalarCase{"0B101", "int 5"}, ScalarCase{"9223372036854775807", "int 9223372036854775807"},
                      ScalarCase{"-9223372036854775808", "int -9223372036854775808"},
                      ScalarCase{"9223372036854775808", "uint 9223372036854775808"},
                      ScalarCase{"18446744073709551615", "uint 18446744073709551615"},
                      ScalarCase{"18446744073709551616", "float 18446744073709551616"},
                      ScalarCase{"+18446744073709551615", "float 18446744073709551616"},
                      ScalarCase{"-9223372036854775809", "float -9223372036854775808"}));

INSTANTIATE_TEST_SUITE_P(
    Floats, YamlScalarResolveTest,
    ::testing::Values(
        ScalarCase{"08", "float 8"}, ScalarCase{"09.5", "float 9.5"}, ScalarCase{"1e3", "float 1000"},
        ScalarCase{"1E3", "float 1000"}, ScalarCase{"1e+3", "float 1000"}, ScalarCase{"1.", "float 1"},
        ScalarCase{"5.0", "float 5"}, ScalarCase{".5", "float 0.5"}, ScalarCase{"0.1", "float 0.1"},
        ScalarCase{"-0.0", "float -0"}, ScalarCase{"1.5_0", "float 1.5"}, ScalarCase{"1_0.5", "float 10.5"},
        ScalarCase{"1e-400", "float 0"}, ScalarCase{"-1e-400", "float -0"}, ScalarCase{"1e-310", "float 1e-310"},
        ScalarCase{"1e400", "float out of range +"}, ScalarCase{"-1e400", "float out of range -"},
        ScalarCase{".5e999", "float out of range +"}, ScalarCase{"1e99999999999999999999", "float out of range +"},
        ScalarCase{"0.0001e-99999999999999999999", "float 0"},
        // Exponents that fit in int64 but overflowed it once the digit count was added (fuzz_yaml_json).
        ScalarCase{"12e9223372036854775807", "float out of range +"},
        ScalarCase{"-12e9223372036854775807", "float out of range -"},
        ScalarCase{"0.001e-9223372036854775807", "float 0"}, ScalarCase{".inf", "float inf"},
        ScalarCase{".Inf", "float inf"}, ScalarCase{".INF", "float inf"}, ScalarCase{"+.inf", "float inf"},
        ScalarCase{"-.inf", "float -inf"}, ScalarCase{"-.Inf", "float -inf"}, ScalarCase{".nan", "float nan"},
        ScalarCase{".NaN", "float nan"}, ScalarCase{".NAN", "float nan"}));

INSTANTIATE_TEST_SUITE_P(
    Strings, YamlScalarResolveTest,
    ::testing::Values(ScalarCase{"._5", "string"}, ScalarCase{"0x", "string"}, ScalarCase{"0o", "string"},
                      ScalarCase{"0b", "string"}, ScalarCase{"0o-1", "string"}, ScalarCase{"+", "string"},
                      ScalarCase{"-", "string"}, ScalarCase{".", "string"}, ScalarCase{"1e", "string"},
                      ScalarCase{"1:20", "string"}, ScalarCase{"190:20:30", "string"},
                      ScalarCase{"2001-12-14", "string"}, ScalarCase{"0x1p3", "string"},
                      ScalarCase{"infinity", "string"}, ScalarCase{"Inf", "string"}, ScalarCase{"NaN", "string"},
                      ScalarCase{"<<", "string"}, ScalarCase{"512Mi", "string"}, ScalarCase{"1.2.3", "string"},
                      ScalarCase{"--1", "string"}, ScalarCase{"0x-1", "string"}, ScalarCase{"inf", "string"}));

TEST(YamlScalarTest, ResolvedTags) {
  for (const char* tag : {"", "?", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                          "tag:yaml.org,2002:null"}) {
    EXPECT_TRUE(isResolvedTag(tag)) << tag;
  }
  for (const char* tag : {"!", "tag:yaml.org,2002:str", "tag:yaml.org,2002:binary", "!mine"}) {
    EXPECT_FALSE(isResolvedTag(tag)) << tag;
  }
}

}  // namespace
}  // namespace kdesched::api
