#include "pkg/moves/deployment.h"

#include <gtest/gtest.h>

namespace kdesched::moves {
namespace {

// intstr.GetScaledValueFromIntOrPercent: maxSurge rounds up, maxUnavailable down.
TEST(Scaled, PercentagesRoundAsTheDeploymentControllerRounds) {
  struct Case {
    IntOrPercent v;
    std::int32_t total;
    bool up;
    std::int32_t want;
  };
  const Case cases[] = {
      {.v = IntOrPercent::of("25%"), .total = 1, .up = true, .want = 1},
      {.v = IntOrPercent::of("25%"), .total = 1, .up = false, .want = 0},
      {.v = IntOrPercent::of("25%"), .total = 4, .up = false, .want = 1},
      {.v = IntOrPercent::of("25%"), .total = 3, .up = true, .want = 1},
      {.v = IntOrPercent::of("50%"), .total = 3, .up = true, .want = 2},
      {.v = IntOrPercent::of("50%"), .total = 3, .up = false, .want = 1},
      {.v = IntOrPercent::of("0%"), .total = 10, .up = true, .want = 0},
      {.v = IntOrPercent::of("100%"), .total = 1, .up = false, .want = 1},
      {.v = IntOrPercent::of(2), .total = 1, .up = true, .want = 2},
  };
  for (const Case& c : cases) {
    Result<std::int32_t> got = scaled(c.v, c.total, c.up);
    ASSERT_TRUE(got) << c.v.text();
    EXPECT_EQ(*got, c.want) << c.v.text() << " of " << c.total << (c.up ? " up" : " down");
  }
}

TEST(Scaled, AStringThatIsNotAPercentageIsAnError) {
  for (const char* bad : {"25", "%", "x%", "2 5%", ""}) {
    Result<std::int32_t> got = scaled(IntOrPercent::of(std::string(bad)), 4, true);
    ASSERT_FALSE(got) << bad;
    EXPECT_NE(got.error().find("not a percentage"), std::string::npos) << got.error();
  }
}

TEST(Fenceposts, BothZeroMakesMaxUnavailableOne) {
  Result<Fenceposts> f = resolveFenceposts(IntOrPercent::of("10%"), IntOrPercent::of("10%"), 1);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->maxSurge, 1);  // 0.1 rounded up
  EXPECT_EQ(f->maxUnavailable, 0);
  f = resolveFenceposts(IntOrPercent::of(0), IntOrPercent::of("10%"), 1);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->maxSurge, 0);
  EXPECT_EQ(f->maxUnavailable, 1);
}

DeploymentFacts settled(std::int32_t replicas) {
  DeploymentFacts d;
  d.ns = "default";
  d.name = "payment";
  d.uid = "u1";
  d.generation = d.observedGeneration = 3;
  d.replicas = d.statusReplicas = d.updatedReplicas = d.availableReplicas = replicas;
  return d;
}

TEST(Restartable, ADefaultSingleReplicaDeploymentMakesBeforeItBreaks) {
  // 25%/25% of one replica: surge 1, unavailable 0.
  EXPECT_EQ(whyNotRestartable(settled(1), 1), std::nullopt);
  EXPECT_EQ(describeRestart(settled(1)),
            "rollout restart of Deployment default/payment (1 replica, maxSurge 1, maxUnavailable 0)");
}

TEST(Restartable, SaysWhyNot) {
  struct Case {
    const char* name;
    DeploymentFacts d;
    std::int32_t maxReplicas;
    const char* says;
  };
  auto with = [](auto edit) {
    DeploymentFacts d = settled(1);
    edit(d);
    return d;
  };
  const Case cases[] = {
      {.name = "more replicas than maxReplicas", .d = settled(4), .maxReplicas = 1, .says = "has 4 replicas"},
      {.name = "25% of 4 lets one go first", .d = settled(4), .maxReplicas = 4, .says = "maxUnavailable 1"},
      {.name = "maxSurge 0",
       .d = with([](DeploymentFacts& d) {
         d.maxSurge = IntOrPercent::of(0);
         d.maxUnavailable = IntOrPercent::of(1);
       }),
       .maxReplicas = 1,
       .says = "maxSurge 0 and maxUnavailable 1"},
      {.name = "Recreate",
       .d = with([](DeploymentFacts& d) { d.strategy = "Recreate"; }),
       .maxReplicas = 1,
       .says = "strategy Recreate"},
      {.name = "paused", .d = with([](DeploymentFacts& d) { d.paused = true; }), .maxReplicas = 1, .says = "paused"},
      {.name = "spec not observed",
       .d = with([](DeploymentFacts& d) { d.generation = 4; }),
       .maxReplicas = 1,
       .says = "mid-rollout"},
      {.name = "a surge pod still there",
       .d = with([](DeploymentFacts& d) { d.statusReplicas = 2; }),
       .maxReplicas = 1,
       .says = "mid-rollout"},
      {.name = "not available",
       .d = with([](DeploymentFacts& d) { d.availableReplicas = 0; }),
       .maxReplicas = 1,
       .says = "mid-rollout"},
      {.name = "a bad percentage",
       .d = with([](DeploymentFacts& d) { d.maxSurge = IntOrPercent::of("x"); }),
       .maxReplicas = 1,
       .says = "maxSurge: invalid value"},
  };
  for (const Case& c : cases) {
    std::optional<std::string> why = whyNotRestartable(c.d, c.maxReplicas);
    ASSERT_TRUE(why) << c.name;
    EXPECT_NE(why->find(c.says), std::string::npos) << c.name << ": " << *why;
  }
}

TEST(Decode, ReadsWhatAMoveNeedsWithTheApiServersDefaults) {
  Result<DeploymentFacts> d = decodeDeployment(R"({"metadata":{"name":"payment","namespace":"default","uid":"u1",
    "resourceVersion":"77","generation":2},"spec":{"replicas":1,"strategy":{"type":"RollingUpdate",
    "rollingUpdate":{"maxSurge":1,"maxUnavailable":"0%"}},"progressDeadlineSeconds":120},
    "status":{"observedGeneration":2,"replicas":1,"updatedReplicas":1,"availableReplicas":1}})");
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->resourceVersion, "77");
  EXPECT_EQ(d->maxSurge.text(), "1");
  EXPECT_EQ(d->maxUnavailable.text(), "0%");
  EXPECT_EQ(d->progressDeadlineSeconds, 120);
  EXPECT_EQ(whyNotRestartable(*d, 1), std::nullopt);
  EXPECT_FALSE(decodeDeployment("{"));
  EXPECT_FALSE(decodeDeployment(R"({"metadata":{"name":"x"}})"));  // no UID: nothing to guard the patch
  EXPECT_FALSE(decodeDeployment(R"({"metadata":{"name":"x","uid":"u"},"spec":{"replicas":"one"}})"));
}

TEST(Decode, AReplicaSetsControllerIsItsOwner) {
  Result<ReplicaSetOwner> o = decodeReplicaSetOwner(R"({"metadata":{"ownerReferences":[
    {"kind":"Other","name":"a","uid":"1"},{"kind":"Deployment","name":"payment","uid":"u1","controller":true}]}})");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->kind, "Deployment");
  EXPECT_EQ(o->name, "payment");
  EXPECT_EQ(o->uid, "u1");
  o = decodeReplicaSetOwner(R"({"metadata":{}})");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->kind, "");
}

}  // namespace
}  // namespace kdesched::moves
