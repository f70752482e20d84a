#include "pkg/policy/extension.h"

#include <gtest/gtest.h>

namespace kdesched::policy {
namespace {

Result<Extension> decode(const std::string& yaml) {
  policy::RawArgs raw = policy::RawArgs::fromYaml(yaml, "kdesched").value();
  return decodeExtension(raw);
}

TEST(ExtensionConfig, Defaults) {
  auto e = decode("");
  ASSERT_TRUE(e.isOk());
  EXPECT_TRUE(e->triggers.enabled);
  EXPECT_EQ(e->triggers.debounceSeconds, 1);
  EXPECT_DOUBLE_EQ(e->triggers.quietSeconds, 0.1);
  EXPECT_DOUBLE_EQ(e->triggers.cpuShare, 0.25);
  EXPECT_EQ(e->antiFlapping.ownerCooldownSeconds, 300);
  EXPECT_EQ(e->antiFlapping.backoffAfter, 3);
}

TEST(ExtensionConfig, Values) {
  auto e = decode(
      "triggers: {enabled: false, debounce: 500ms, rolloutGrace: 0s, cpuShare: 0.25}\n"
      "antiFlapping: {ownerCooldown: 1m, maxEvictionsPerMinute: 0, backoffAfter: 2, backoffInitial: 30s, backoffMax: "
      "1h}");
  ASSERT_TRUE(e.isOk()) << e.error();
  EXPECT_FALSE(e->triggers.enabled);
  EXPECT_DOUBLE_EQ(e->triggers.debounceSeconds, 0.5);
  EXPECT_EQ(e->triggers.rolloutGraceSeconds, 0);
  EXPECT_DOUBLE_EQ(e->triggers.cpuShare, 0.25);
  EXPECT_EQ(e->antiFlapping.ownerCooldownSeconds, 60);
  EXPECT_EQ(e->antiFlapping.maxEvictionsPerMinute, 0);
  EXPECT_EQ(e->antiFlapping.backoffAfter, 2);
}

TEST(ExtensionConfig, ErrorsNameTheField) {
  auto typo = decode("triggers: {debounse: 1s}");
  ASSERT_FALSE(typo.isOk());
  EXPECT_NE(typo.error().find("kdesched.triggers.debounse: unknown field \"debounse\" (did you mean \"debounce\"?)"),
            std::string::npos)
      << typo.error();
  auto zero = decode("triggers: {debounce: 0s}");
  ASSERT_FALSE(zero.isOk());
  EXPECT_NE(zero.error().find("kdesched.triggers.debounce: must be positive"), std::string::npos) << zero.error();
  for (const char* bad : {"0", "1.5", "-0.1"}) {
    auto share = decode(std::string("triggers: {cpuShare: ") + bad + "}");
    ASSERT_FALSE(share.isOk()) << bad;
    EXPECT_NE(share.error().find(std::string("kdesched.triggers.cpuShare: must be above 0 and at most 1 (a share of "
                                             "one core), got ") +
                                 bad),
              std::string::npos)
        << share.error();
  }
  auto word = decode("triggers: {cpuShare: half}");
  ASSERT_FALSE(word.isOk());
  EXPECT_NE(word.error().find("kdesched.triggers.cpuShare: must be a number"), std::string::npos) << word.error();
  auto after = decode("antiFlapping: {backoffAfter: 0}");
  ASSERT_FALSE(after.isOk());
  EXPECT_NE(after.error().find("kdesched.antiFlapping.backoffAfter: must be at least 1, got 0"), std::string::npos)
      << after.error();
  auto order = decode("antiFlapping: {backoffInitial: 1h, backoffMax: 1m}");
  ASSERT_FALSE(order.isOk());
  auto unknown = decode("trigger: {}");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.error().find("did you mean \"triggers\""), std::string::npos) << unknown.error();
}

TEST(ExtensionConfig, BlockedEvents) {
  auto d = decode("");
  ASSERT_TRUE(d.isOk());
  EXPECT_TRUE(d->blockedEvents.enabled);
  EXPECT_EQ(d->blockedEvents.periodSeconds, 3600);
  EXPECT_EQ(d->blockedEvents.perMinute, 10);
  auto v = decode("blockedEvents: {period: 10m, perMinute: 0}");
  ASSERT_TRUE(v.isOk()) << v.error();
  EXPECT_EQ(v->blockedEvents.periodSeconds, 600);
  EXPECT_EQ(v->blockedEvents.perMinute, 0);
  // Upstream posts none: off with every switch upstream's, unless asked for by name.
  auto up = decode("compat: upstream");
  ASSERT_TRUE(up.isOk());
  EXPECT_FALSE(up->blockedEvents.enabled);
  auto upOn = decode("compat: upstream\nblockedEvents: {enabled: true}");
  ASSERT_TRUE(upOn.isOk());
  EXPECT_TRUE(upOn->blockedEvents.enabled);
  auto one = decode("compat: {cumulativeFit: upstream}");
  ASSERT_TRUE(one.isOk());
  EXPECT_TRUE(one->blockedEvents.enabled) << "one switch back is not upstream as a whole";
  auto typo = decode("blockedEvents: {perMinutes: 5}");
  ASSERT_FALSE(typo.isOk());
  EXPECT_NE(typo.error().find("kdesched.blockedEvents.perMinutes: unknown field \"perMinutes\" (did you mean "
                              "\"perMinute\"?)"),
            std::string::npos)
      << typo.error();
  auto zero = decode("blockedEvents: {period: 0s}");
  ASSERT_FALSE(zero.isOk());
  EXPECT_NE(zero.error().find("kdesched.blockedEvents.period: must be positive"), std::string::npos) << zero.error();
  auto neg = decode("blockedEvents: {perMinute: -1}");
  ASSERT_FALSE(neg.isOk());
  EXPECT_NE(neg.error().find("kdesched.blockedEvents.perMinute: must be zero"), std::string::npos) << neg.error();
}

TEST(ExtensionConfig, Moves) {
  auto d = decode("");
  ASSERT_TRUE(d.isOk());
  EXPECT_FALSE(d->moves.enabled) << "moves are opt-in";
  EXPECT_EQ(d->moves.maxReplicas, 1);
  EXPECT_EQ(d->moves.deadlineSeconds, 0);
  auto v = decode(
      "moves: {enabled: true, maxReplicas: 2, deadline: 3m, namespaces: {include: [shop]}, labelSelector: "
      "{matchLabels: {tier: web}}}");
  ASSERT_TRUE(v.isOk()) << v.error();
  EXPECT_TRUE(v->moves.enabled);
  EXPECT_EQ(v->moves.maxReplicas, 2);
  EXPECT_EQ(v->moves.deadlineSeconds, 180);
  ASSERT_TRUE(v->moves.namespaces);
  EXPECT_EQ(v->moves.namespaces->include, std::vector<std::string>{"shop"});
  ASSERT_TRUE(v->moves.labelSelector);
  auto up = decode("compat: upstream\nmoves: {enabled: true}");
  ASSERT_TRUE(up.isOk()) << up.error();
  EXPECT_FALSE(up->moves.enabled) << "upstream has no moves";
  auto typo = decode("moves: {enabled: true, maxReplica: 2}");
  ASSERT_FALSE(typo.isOk());
  EXPECT_NE(typo.error().find("kdesched.moves.maxReplica: unknown field \"maxReplica\" (did you mean "
                              "\"maxReplicas\"?)"),
            std::string::npos)
      << typo.error();
  auto zero = decode("moves: {maxReplicas: 0}");
  ASSERT_FALSE(zero.isOk());
  EXPECT_NE(zero.error().find("kdesched.moves.maxReplicas: must be at least 1, got 0"), std::string::npos)
      << zero.error();
  auto top = decode("move: {enabled: true}");
  ASSERT_FALSE(top.isOk());
  EXPECT_NE(top.error().find("did you mean \"moves\""), std::string::npos) << top.error();
}

TEST(ExtensionConfig, PodLifeTimeJitter) {
  auto off = decode("");
  ASSERT_TRUE(off.isOk());
  EXPECT_EQ(off->podLifeTime.jitterSeconds, 0u);
  auto on = decode("podLifeTime: {jitter: 10m}");
  ASSERT_TRUE(on.isOk()) << on.error();
  EXPECT_EQ(on->podLifeTime.jitterSeconds, 600u);
  // Checked, then dropped: upstream has no such thing.
  auto upstream = decode("podLifeTime: {jitter: 10m}\ncompat: upstream");
  ASSERT_TRUE(upstream.isOk()) << upstream.error();
  EXPECT_EQ(upstream->podLifeTime.jitterSeconds, 0u);
  for (const char* bad : {"500ms", "-1m", "745h"}) {
    auto e = decode(std::string("podLifeTime: {jitter: ") + bad + "}");
    ASSERT_FALSE(e.isOk()) << bad;
    EXPECT_NE(e.error().find("kdesched.podLifeTime.jitter: "), std::string::npos) << e.error();
  }
  auto half = decode("podLifeTime: {jitter: 500ms}");
  EXPECT_NE(half.error().find("kdesched.podLifeTime.jitter: must be 0s (off) or from 1s to 744h, got 0.5s"),
            std::string::npos)
      << half.error();
  auto typo = decode("podLifeTime: {jiter: 1m}");
  ASSERT_FALSE(typo.isOk());
  EXPECT_NE(typo.error().find("kdesched.podLifeTime.jiter: unknown field \"jiter\" (did you mean \"jitter\"?)"),
            std::string::npos)
      << typo.error();
  auto block = decode("podLifetime: {jitter: 1m}");
  ASSERT_FALSE(block.isOk());
  EXPECT_NE(block.error().find("did you mean \"podLifeTime\""), std::string::npos) << block.error();
}

TEST(ExtensionConfig, CompatDefaultsToKdesched) {
  auto e = decode("");
  ASSERT_TRUE(e.isOk());
  EXPECT_TRUE(e->compat.cumulativeFit);
  EXPECT_TRUE(e->compat.podsWithoutPDBProtection);
}

TEST(ExtensionConfig, CompatUpstreamTurnsEverySwitch) {
  auto e = decode("compat: upstream");
  ASSERT_TRUE(e.isOk()) << e.error();
  policy::Compat c = e->compat;
  for (std::string_view name : policy::Compat::names()) EXPECT_FALSE(*c.field(name)) << name;
  auto back = decode("compat: kdesched");
  ASSERT_TRUE(back.isOk()) << back.error();
  policy::Compat k = back->compat;
  for (std::string_view name : policy::Compat::names()) EXPECT_TRUE(*k.field(name)) << name;
}

TEST(ExtensionConfig, CompatOneSwitch) {
  auto e = decode("compat: {cumulativeFit: upstream, minDomainsHonoured: kdesched}");
  ASSERT_TRUE(e.isOk()) << e.error();
  policy::Compat c = e->compat;
  for (std::string_view name : policy::Compat::names()) EXPECT_EQ(*c.field(name), name != "cumulativeFit") << name;
}

TEST(ExtensionConfig, CompatErrorsNameTheField) {
  auto mode = decode("compat: exact");
  ASSERT_FALSE(mode.isOk());
  EXPECT_NE(mode.error().find("kdesched.compat: must be upstream or kdesched"), std::string::npos) << mode.error();
  auto value = decode("compat: {cumulativeFit: exact}");
  ASSERT_FALSE(value.isOk());
  EXPECT_NE(value.error().find("kdesched.compat.cumulativeFit: must be upstream or kdesched, got \"exact\""),
            std::string::npos)
      << value.error();
  auto typo = decode("compat: {cumulativeFits: upstream}");
  ASSERT_FALSE(typo.isOk());
  EXPECT_NE(typo.error().find("did you mean \"cumulativeFit\""), std::string::npos) << typo.error();
  auto list = decode("compat: [upstream]");
  ASSERT_FALSE(list.isOk());
  EXPECT_NE(list.error().find("kdesched.compat: must be upstream, kdesched, or a mapping"), std::string::npos)
      << list.error();
}

}  // namespace
}  // namespace kdesched::policy
