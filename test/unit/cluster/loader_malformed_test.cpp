// Snapshots whose JSON breaks where the loader looks first: a clear error, and nothing undefined
// (UBSan saw a member call on a null parser for `{a}` when the failed lookup was followed by a reset).
#include <gtest/gtest.h>

#include "pkg/cluster/loader.h"
#include "pkg/cluster/store.h"

namespace kdesched::cluster {
namespace {

TEST(LoaderMalformed, BrokenJsonAtTheTopIsAnErrorNotUndefinedBehaviour) {
  for (const char* text : {"{a}", "{\"kind\" 1}", "{\"kind\":", "{,}", "[{a}]", "{\"items\": [1,}"}) {
    Store store;
    auto r = loadSnapshot(text, "s.json", store);
    ASSERT_FALSE(r.isOk()) << text;
    EXPECT_EQ(r.error().rfind("s.json: ", 0), 0u) << r.error();
  }
}

}  // namespace
}  // namespace kdesched::cluster
