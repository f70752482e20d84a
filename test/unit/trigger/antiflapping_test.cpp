#include "pkg/trigger/antiflapping.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::testing {
namespace {

struct Fixture {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  std::vector<std::string> suppressed;
  std::vector<std::string> gaveUp;
  policy::AntiFlappingConfig config;
  std::unique_ptr<trigger::AntiFlapping> gate;
  void make() {
    gate = std::make_unique<trigger::AntiFlapping>(
        config, clock,
        [this](const trigger::AntiFlapping::PodRef& p, int flaps, double backoff) {
          gaveUp.push_back(p.name + " flaps=" + std::to_string(flaps) +
                           " backoff=" + std::to_string(static_cast<int>(backoff)));
        },
        [this](const std::string& r) { suppressed.push_back(r); });
  }
};

evictor::Decision decide(const api::Pod& p, std::string node = "node2") {
  return {&p, std::move(node), "RemovePodsViolatingInterPodAntiAffinity", "default",
          "required podAntiAffinity term {labelSelector: app=order, topologyKey: kubernetes.io/hostname} is violated "
          "by pod "
          "default/order-" +
              p.name + " on node node2"};
}

TEST(AntiFlapping, OwnerCooldown) {
  Fixture f;
  f.make();
  auto a = PodBuilder("a").ownerUid("ReplicaSet", "rs", "rs-uid").node("node2").build();
  auto b = PodBuilder("b").ownerUid("ReplicaSet", "rs", "rs-uid").node("node3").build();
  auto other = PodBuilder("c").ownerUid("ReplicaSet", "rs2", "rs2-uid").node("node3").build();
  EXPECT_EQ(f.gate->admit(decide(*a)).refusal, framework::Refusal::None);
  f.gate->evicted(decide(*a));
  auto r = f.gate->admit(decide(*b));
  EXPECT_EQ(r.refusal, framework::Refusal::AntiFlapping);
  EXPECT_EQ(r.suppression, framework::Suppression::Cooldown);
  EXPECT_EQ(r.by, "anti-flapping: cooldown");
  EXPECT_EQ(f.gate->admit(decide(*other)).refusal, framework::Refusal::None);  // another owner
  f.clock->advanceSeconds(301);
  EXPECT_EQ(f.gate->admit(decide(*b)).refusal, framework::Refusal::None);
  EXPECT_EQ(f.suppressed, std::vector<std::string>{"cooldown"});
}

// Upstream evicts the whole set one cycle planned; the cooldown must not cut it (a spread imbalance
// of one Deployment would otherwise take one eviction per cooldown). It starts when the run ends and
// gates the next runs.
TEST(AntiFlapping, OwnerCooldownStartsWhenTheRunEndsAndNeverCutsItsOwnSet) {
  Fixture f;
  f.make();
  auto a = PodBuilder("a").ownerUid("ReplicaSet", "rs", "rs-uid").node("node2").build();
  auto b = PodBuilder("b").ownerUid("ReplicaSet", "rs", "rs-uid").node("node3").build();
  auto c = PodBuilder("c").ownerUid("ReplicaSet", "rs", "rs-uid").node("node3").build();
  f.gate->runStarted();
  ASSERT_EQ(f.gate->admit(decide(*a)).refusal, framework::Refusal::None);
  f.gate->evicted(decide(*a));
  EXPECT_EQ(f.gate->admit(decide(*b)).refusal, framework::Refusal::None) << "same run, same snapshot";
  f.gate->evicted(decide(*b));
  f.clock->advanceSeconds(200);  // a long run: the late answers arrive
  f.gate->runFinished();
  f.gate->runStarted();
  f.clock->advanceSeconds(250);  // 450 s after the evictions, 250 s after the run ended
  auto r = f.gate->admit(decide(*c));
  EXPECT_EQ(r.refusal, framework::Refusal::AntiFlapping) << "the next run is gated";
  EXPECT_EQ(r.suppression, framework::Suppression::Cooldown);
  EXPECT_EQ(r.by, "anti-flapping: cooldown");
  f.gate->runFinished();
  f.clock->advanceSeconds(51);  // 301 s after the first run ended
  f.gate->runStarted();
  EXPECT_EQ(f.gate->admit(decide(*c)).refusal, framework::Refusal::None);
  f.gate->runFinished();
  EXPECT_EQ(f.suppressed, std::vector<std::string>{"cooldown"});
}

TEST(AntiFlapping, GlobalRateLimitPerMinute) {
  Fixture f;
  f.config.ownerCooldownSeconds = 0;
  f.config.maxEvictionsPerMinute = 2;
  f.make();
  std::vector<std::shared_ptr<const api::Pod>> pods;
  for (int i = 0; i < 3; ++i) pods.push_back(PodBuilder("p" + std::to_string(i)).node("node2").build());
  f.gate->evicted(decide(*pods[0]));
  f.gate->evicted(decide(*pods[1]));
  EXPECT_EQ(f.gate->admit(decide(*pods[2])).by, "anti-flapping: rate-limit");
  f.clock->advanceSeconds(61);
  EXPECT_EQ(f.gate->admit(decide(*pods[2])).refusal, framework::Refusal::None);
}

TEST(AntiFlapping, ReplacementsLandingBackBackOffExponentially) {
  Fixture f;
  f.config.ownerCooldownSeconds = 0;
  f.config.backoffAfter = 3;
  f.config.backoffInitialSeconds = 600;
  f.make();
  const std::string owner = "rs-uid";
  for (int round = 0; round < 3; ++round) {
    auto p = PodBuilder("p" + std::to_string(round)).ownerUid("ReplicaSet", "rs", owner).node("node2").build();
    ASSERT_EQ(f.gate->admit(decide(*p)).refusal, framework::Refusal::None) << round;
    f.gate->evicted(decide(*p));
    f.clock->advanceSeconds(5);
    f.gate->replacementBound(owner, "node2", {"default", "p" + std::to_string(round + 1), "u"});  // back on node2
  }
  EXPECT_TRUE(f.gate->inBackoff(owner));
  ASSERT_FALSE(f.gaveUp.empty());
  auto p = PodBuilder("p9").ownerUid("ReplicaSet", "rs", owner).node("node2").build();
  EXPECT_EQ(f.gate->admit(decide(*p)).by, "anti-flapping: backoff");
  f.clock->advanceSeconds(601);
  EXPECT_FALSE(f.gate->inBackoff(owner));
}

TEST(AntiFlapping, ReplacementElsewhereIsNotAFlap) {
  Fixture f;
  f.config.ownerCooldownSeconds = 0;
  f.make();
  auto p = PodBuilder("payment").ownerUid("ReplicaSet", "rs", "rs-uid").node("node2").build();
  f.gate->evicted(decide(*p));
  f.gate->replacementBound("rs-uid", "node3", {"default", "payment-2", "u"});
  EXPECT_EQ(f.gate->flaps("rs-uid"), 0);
}

// Evicting one owner's pods off one node one after another (a budget's maxUnavailablePerOwner
// pacing a drain) is not flapping: only a pod created since the owner's last eviction, its
// replacement, counts when the same rule is broken on the same node again. A pod whose creation
// time is unknown counts (when in doubt, back off).
TEST(AntiFlapping, APacedDrainOfSiblingsIsNotAFlapButAReplacementIs) {
  Fixture f;
  f.config.ownerCooldownSeconds = 0;
  f.config.backoffAfter = 3;
  f.make();
  const auto wall = static_cast<api::Timestamp>(f.clock->unixSeconds());
  for (int i = 0; i < 6; ++i) {
    auto sibling = PodBuilder("web-" + std::to_string(i))
                       .ownerUid("ReplicaSet", "rs", "rs-uid")
                       .node("node2")
                       .created(wall - 600)
                       .build();
    ASSERT_EQ(f.gate->admit(decide(*sibling)).refusal, framework::Refusal::None) << i;
    f.gate->evicted(decide(*sibling));
    f.clock->advanceSeconds(4);
  }
  EXPECT_EQ(f.gate->flaps("rs-uid"), 0) << "six siblings drained off node2";
  EXPECT_FALSE(f.gate->inBackoff("rs-uid"));

  auto replacement = PodBuilder("web-6")
                         .ownerUid("ReplicaSet", "rs", "rs-uid")
                         .node("node2")
                         .created(static_cast<api::Timestamp>(f.clock->unixSeconds()) - 1)
                         .build();
  f.gate->evicted(decide(*replacement));
  EXPECT_EQ(f.gate->flaps("rs-uid"), 1) << "created after the last eviction, back on node2";
  auto unknown = PodBuilder("web-7").ownerUid("ReplicaSet", "rs", "rs-uid").node("node2").noCreationTimestamp().build();
  f.gate->evicted(decide(*unknown));
  EXPECT_EQ(f.gate->flaps("rs-uid"), 2) << "no creation time: counted";
}

TEST(AntiFlapping, BarePodsHaveNoLedger) {
  Fixture f;
  f.make();
  auto p = PodBuilder("bare").bare().node("node2").build();
  f.gate->evicted(decide(*p));
  EXPECT_EQ(f.gate->admit(decide(*p)).refusal, framework::Refusal::None);
}

// Every evicted controller enters the ledger (each rollout's ReplicaSet, each Job): a daemon that
// never forgot them would grow with its uptime. An owner is forgotten once it has been quiet for
// max(ownerCooldown, backoffMax) after its last eviction and after its backoff; not before, so
// flaps hours apart still escalate.
TEST(AntiFlapping, QuietOwnersAreForgottenAfterTheLongestBackoff) {
  Fixture f;
  f.config.ownerCooldownSeconds = 300;
  f.config.backoffAfter = 1;
  f.config.backoffInitialSeconds = 600;
  f.config.backoffMaxSeconds = 3600;
  f.make();
  auto quiet = PodBuilder("quiet").ownerUid("ReplicaSet", "rs", "quiet-uid").node("node2").build();
  auto flapping = PodBuilder("flapping").ownerUid("ReplicaSet", "rs2", "flapping-uid").node("node2").build();
  f.gate->runStarted();
  f.gate->evicted(decide(*quiet));
  f.gate->evicted(decide(*flapping));
  f.gate->runFinished();
  f.gate->replacementBound("flapping-uid", "node2", {"default", "flapping-2", "u"});  // back: backoff 600 s
  ASSERT_TRUE(f.gate->inBackoff("flapping-uid"));
  ASSERT_EQ(f.gate->ledgerSize(), 2u);
  f.clock->advanceSeconds(3601);  // quiet's last eviction is past the memory; flapping's backoff ended at 600 s
  f.gate->runStarted();
  f.gate->runFinished();
  EXPECT_EQ(f.gate->ledgerSize(), 1u) << "quiet is forgotten, flapping is remembered till 600 + 3600 s";
  f.clock->advanceSeconds(600);
  f.gate->runStarted();
  f.gate->runFinished();
  EXPECT_EQ(f.gate->ledgerSize(), 0u);
  // A forgotten owner starts over: admitted, no cooldown.
  EXPECT_EQ(f.gate->admit(decide(*quiet)).refusal, framework::Refusal::None);
}

}  // namespace
}  // namespace kdesched::testing
