#include "pkg/kube/cache_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kdesched::kube {
namespace {

using ::testing::HasSubstr;

TEST(CacheHealth, TracksRelistsPerKindUntilListed) {
  CacheHealth h;
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 0u);
  h.relistRequested(api::Kind::Pod);
  h.relistRequested(api::Kind::PodDisruptionBudget);
  EXPECT_THAT(h.relisting(), HasSubstr("Pod"));
  EXPECT_THAT(h.relisting(), HasSubstr("PodDisruptionBudget"));
  EXPECT_EQ(h.relistRequests(), 2u);
  h.listed(api::Kind::PodDisruptionBudget);
  EXPECT_EQ(h.relisting(), "Pod");
  h.listed(api::Kind::Pod);
  EXPECT_EQ(h.relisting(), "");
  // A first list (no relist requested) changes nothing.
  h.listed(api::Kind::Node);
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 2u);
}

TEST(CacheHealth, IsTheReflectorsObserver) {
  CacheHealth h;
  ReflectorObserver& o = h;
  o.onRelist(api::Kind::Node, "gone");
  EXPECT_EQ(h.relisting(), "Node");
  o.onList(api::Kind::Node, 3, 0.1);
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 1u);
}

}  // namespace
}  // namespace kdesched::kube
