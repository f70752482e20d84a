// MakeRoomForPendingPods args: every default and every validation message.
#include "pkg/plugins/makeroomforpendingpods/args.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"

namespace kdesched::testing {
namespace {

using plugins::makeroomforpendingpods::decodeArgs;
using plugins::makeroomforpendingpods::kName;

TEST(MakeRoomArgs, Defaults) {
  auto a = decodeArgs(rawArgs(kName, ""));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->minPendingSeconds, 60);
  EXPECT_FALSE(a->minPriority.has_value());
  EXPECT_EQ(a->maxMovesPerPod, 2);
  EXPECT_FALSE(a->filter.namespaces.has_value());
  EXPECT_FALSE(a->filter.labelSelector.has_value());
}

TEST(MakeRoomArgs, ReadsEveryField) {
  auto a = decodeArgs(rawArgs(kName,
                              "minPendingSeconds: 0\n"
                              "minPriority: -5\n"
                              "maxMovesPerPod: 4\n"
                              "namespaces: {exclude: [kube-system]}\n"
                              "labelSelector: {matchLabels: {app: web}}"));
  ASSERT_TRUE(a.isOk()) << a.error();
  EXPECT_EQ(a->minPendingSeconds, 0);
  EXPECT_EQ(a->minPriority, -5);
  EXPECT_EQ(a->maxMovesPerPod, 4);
  ASSERT_TRUE(a->filter.namespaces.has_value());
  EXPECT_EQ(a->filter.namespaces->exclude, std::vector<std::string>{"kube-system"});
  ASSERT_TRUE(a->filter.labelSelector.has_value());
  EXPECT_EQ(a->filter.labelSelector->toString(), "app=web");
}

struct ErrorCase {
  const char* yaml;
  const char* want;
};

TEST(MakeRoomArgs, ErrorsNameTheFieldAndValue) {
  const std::string at = std::string(kArgsPath) + ".";
  for (const ErrorCase& c : {
           ErrorCase{"minPendingSeconds: -1", "minPendingSeconds: must be zero or positive, got -1"},
           ErrorCase{"maxMovesPerPod: 0", "maxMovesPerPod: must be between 1 and 4, got 0"},
           ErrorCase{"maxMovesPerPod: 5", "maxMovesPerPod: must be between 1 and 4, got 5"},
           ErrorCase{"minPendingSecond: 10", "did you mean \"minPendingSeconds\""},
           ErrorCase{"minPriority: high", "minPriority"},
       }) {
    const std::string err = decodeError(decodeArgs, kName, c.yaml);
    EXPECT_NE(err.find(c.want), std::string::npos) << c.yaml << " -> " << err;
    EXPECT_NE(err.find(kArgsPath), std::string::npos) << c.yaml << " -> " << err;
  }
}

}  // namespace
}  // namespace kdesched::testing
