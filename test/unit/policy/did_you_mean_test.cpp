#include "pkg/policy/did_you_mean.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kdesched::policy {
namespace {

TEST(EditDistanceTest, Distances) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("abc", ""), 3u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("thresholds", "thresholds"), 0u);
  EXPECT_EQ(editDistance("tresholds", "thresholds"), 1u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("nodeFti", "nodeFit"), 1u);  // a transposition costs 1
  EXPECT_EQ(editDistance("Thresholds", "thresholds"), 1u);
}

TEST(EditDistanceTest, ClosestMatch) {
  const std::vector<std::string> fields = {"thresholds", "targetThresholds", "numberOfNodes", "evictableNamespaces"};
  EXPECT_EQ(closestMatch("tresholds", fields), "thresholds");
  EXPECT_EQ(closestMatch("targetTresholds", fields), "targetThresholds");
  EXPECT_EQ(closestMatch("numberOfNode", fields), "numberOfNodes");
  EXPECT_EQ(closestMatch("somethingElse", fields), "");
  EXPECT_EQ(closestMatch("nodes", fields, 3), "");
  EXPECT_EQ(closestMatch("ab", {"cd"}), "");  // everything rewritten is not a typo
  EXPECT_EQ(closestMatch("x", {}), "");
  EXPECT_EQ(closestMatch("tresholds", fields, 0), "");
}

}  // namespace
}  // namespace kdesched::policy
