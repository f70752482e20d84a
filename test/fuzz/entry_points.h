// One function per fuzz target: feeds an input to a decoder the way kdesched feeds it real input.
// The libFuzzer binaries (fuzz_main.cpp, clang) and the regression unit test
// (test/unit/fuzz/fuzz_regressions_test.cpp, the ordinary g++ build) both call these, so a crash
// input committed under test/fuzz/regressions/<target>/ is re-checked by every CI run.
//
// A clean error (Status/Result) is a correct answer to bad input. What is not: a crash, undefined
// behaviour, a leak, a hang, unbounded memory, or a broken invariant (checked here, e.g. a quantity
// formatted by formatMilli must parse back to the same amount), which aborts with a message.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace kdesched::fuzz {

struct Target {
  std::string_view name;  // the binary is fuzz_<name>; regressions live in test/fuzz/regressions/<name>/
  void (*run)(std::string_view input);
};

std::span<const Target> targets();
const Target* findTarget(std::string_view name);  // nullptr when unknown

}  // namespace kdesched::fuzz
