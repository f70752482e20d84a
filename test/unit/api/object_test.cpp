#include "pkg/api/object.h"

#include <gtest/gtest.h>

namespace kdesched::api {
namespace {

TEST(ObjectKindTest, NamesRoundTrip) {
  EXPECT_EQ(kindFromString("Pod"), Kind::Pod);
  EXPECT_EQ(kindFromString("PodDisruptionBudget"), Kind::PodDisruptionBudget);
  EXPECT_EQ(kindFromString("PodList"), Kind::Unknown);
  EXPECT_EQ(toString(Kind::PersistentVolumeClaim), "PersistentVolumeClaim");
}

}  // namespace
}  // namespace kdesched::api
