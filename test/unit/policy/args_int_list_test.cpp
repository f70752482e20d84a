// ArgsReader::readInt32List, the reader of the exitCodes args (RemoveFailedPods, PodLifeTime).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/policy/args.h"
#include "pkg/policy/detail/yaml_value.h"

namespace kdesched::policy {
namespace {

constexpr const char* kPath = "profiles[0].pluginConfig[1].args";

ArgsReader readerFor(const std::string& yaml) { return ArgsReader(detail::rawArgs(YAML::Load(yaml), kPath)); }

TEST(ArgsReaderTest, ReadInt32List) {
  ArgsReader r = readerFor("a: [0, 137, -1, 0x10]\nb: []\nc: 1\nd: [1, x]\ne: [1, 2147483648]\nf:\ng: [1, ~]\n");
  std::optional<std::vector<std::int32_t>> a, b, c, d, e, f, g;
  ASSERT_TRUE(r.readInt32List("a", a).isOk());
  EXPECT_EQ(a, (std::vector<std::int32_t>{0, 137, -1, 16}));
  ASSERT_TRUE(r.readInt32List("b", b).isOk());
  EXPECT_EQ(b, std::vector<std::int32_t>{});
  EXPECT_EQ(r.readInt32List("c", c).message(), std::string(kPath) + ".c: must be a list of integers, got 1");
  EXPECT_EQ(r.readInt32List("d", d).message(),
            std::string(kPath) + ".d[1]: must be an integer between -2147483648 and 2147483647, got \"x\"");
  EXPECT_EQ(r.readInt32List("e", e).message(),
            std::string(kPath) + ".e[1]: must be an integer between -2147483648 and 2147483647, got 2147483648");
  ASSERT_TRUE(r.readInt32List("f", f).isOk());
  EXPECT_FALSE(f.has_value());
  EXPECT_EQ(r.readInt32List("g", g).message(),
            std::string(kPath) + ".g[1]: must be an integer between -2147483648 and 2147483647, got null");
  EXPECT_TRUE(r.finish().isOk());
}

}  // namespace
}  // namespace kdesched::policy
