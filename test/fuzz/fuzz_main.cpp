// The libFuzzer entry of every fuzz target: CMake builds this file once per target, naming the
// target with KDESCHED_FUZZ_TARGET (the binary fuzz_<name>).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "test/fuzz/entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const kdesched::fuzz::Target* target = [] {
    const auto* t = kdesched::fuzz::findTarget(KDESCHED_FUZZ_TARGET);
    if (!t) {
      std::fprintf(stderr, "unknown fuzz target %s\n", KDESCHED_FUZZ_TARGET);
      std::abort();
    }
    return t;
  }();
  target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
