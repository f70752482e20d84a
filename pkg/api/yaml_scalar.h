// How a plain YAML scalar is typed: the one place that knows YAML 1.1's resolution rules as
// sigs.k8s.io/yaml applies them (it parses with go-yaml v2, then writes JSON). Both readers of
// YAML use it, the YAML→JSON conversion of snapshot files (yaml_json.h) and the policy's
// ArgsReader, so a plain `yes`, `0x1F` or `1e3` means the same in both, and what it means upstream.
//
// A plain scalar is unquoted and untagged; quoted and block scalars are always strings. The table
// below is what sigs.k8s.io/yaml v1.4.0's YAMLToJSON makes of `v: <text>` (checked by running it):
//
//   text                                          type    JSON
//   (empty) ~ null Null NULL                      Null    null
//   true True TRUE yes Yes YES y Y on On ON       Bool    true
//   false False FALSE no No NO n N off Off OFF    Bool    false
//   nULL tRUE yES                                 String  (only the spellings above)
//   42 +7 -7 -0                                   Int     42 7 -7 0
//   1_000 1__0 1_ 0_0                             Int     1000 10 1 0 (underscores are dropped)
//   _1                                            String  (a number starts with a digit, sign or '.')
//   0x1F 0X1F -0x1F 0x_1F                         Int     31 31 -31 31
//   0o17 017 0017 -017 +017                       Int     15 15 15 -15 15 (a leading 0 is octal)
//   0b101 -0b101 0B101                            Int     5 -5 5
//   9223372036854775808 … 18446744073709551615    Int     as written (strconv.ParseUint's uint64)
//   18446744073709551616 -9223372036854775809     Float   1.8446744073709552e19 -9.223372036854776e18
//   +18446744073709551615                         Float   1.8446744073709552e19 (ParseUint takes no sign)
//   08 09.5                                       Float   8 9.5 (not octal, so read as a float)
//   1e3 1E3 1e+3 1. 5.0                           Float   1000 1000 1000 1 5
//   .5 0.1 -0.0 1.5_0 1_0.5                       Float   0.5 0.1 -0 1.5 10.5
//   1e-400                                        Float   0 (underflow reads as zero)
//   1e400 -1e400 .5e999                           String  (strconv.ParseFloat fails: out of range)
//   .inf +.inf -.inf .Inf .INF .nan .NaN .NAN     Float   none: YAMLToJSON fails, JSON has no such number
//   ._5 0x 0o + . 1e 1:20 2001-12-14 0x1p3        String
//   Inf NaN infinity                              String
//
// One deliberate difference: text out of double's range (1e400) is reported as a Float with
// `outOfRange` set. The YAML→JSON conversion writes it as a string, as upstream does; the
// ArgsReader says "must be a finite number, got 1e400", which tells the operator more than
// upstream's "cannot unmarshal string into float64".
//
// Merge keys (`<<`) are not a scalar type: the YAML readers handle them where they read keys.
#pragma once

#include <cstdint>
#include <string_view>

namespace kdesched::api {

enum class ScalarType { Null, Bool, Int, Float, String };

struct PlainScalar {
  ScalarType type = ScalarType::String;
  bool boolean = false;  // Bool
  // Int: strconv.ParseInt's value (base 0, underscores dropped). A value above int64's range that
  // strconv.ParseUint reads sets `aboveInt64` and is in `uint64`.
  std::int64_t int64 = 0;
  std::uint64_t uint64 = 0;
  bool aboveInt64 = false;
  // Float: the value; ±inf or NaN for .inf/.nan, and ±inf with `outOfRange` for decimal text
  // beyond double's range.
  double real = 0;
  bool outOfRange = false;
};

PlainScalar resolvePlainScalar(std::string_view text);

// Whether a scalar carrying this (yaml-cpp) tag is typed from its text: "?" marks a plain scalar,
// "" a node built in code, and the standard !!bool, !!int, !!float and !!null tags ask for the
// same resolution. "!" (a quoted or block scalar), !!str and any other tag make a string.
bool isResolvedTag(std::string_view tag);

}  // namespace kdesched::api
