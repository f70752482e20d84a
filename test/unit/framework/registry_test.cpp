#include "pkg/framework/registry.h"

#include <gtest/gtest.h>

#include "pkg/plugins/registry.h"

namespace kdesched::testing {
namespace {

using framework::PluginRegistration;

// A factory that says which registration built it, through the error it returns.
PluginRegistration named(const std::string& name, const std::string& tag) {
  return {name,
          [tag](const policy::RawArgs&, const framework::BuildContext&) -> Result<std::unique_ptr<framework::Plugin>> {
            return Status::error(tag);
          }};
}

std::string tagOf(const framework::Registry& r, const std::string& name) {
  const PluginRegistration* reg = r.find(name);
  if (!reg) return "<missing>";
  auto built = reg->factory(policy::RawArgs{}, framework::BuildContext{});
  return built.isOk() ? "<built>" : built.error();
}

TEST(Registry, FindsWhatWasAddedAndListsNamesSorted) {
  framework::Registry r;
  ASSERT_TRUE(r.add(named("Zeta", "z")).isOk());
  ASSERT_TRUE(r.add(named("Alpha", "a")).isOk());
  EXPECT_EQ(r.names(), (std::vector<std::string>{"Alpha", "Zeta"}));
  EXPECT_EQ(tagOf(r, "Alpha"), "a");
  EXPECT_EQ(r.find("Beta"), nullptr);
}

TEST(Registry, RejectsADuplicateNameAndKeepsTheFirst) {
  framework::Registry r;
  ASSERT_TRUE(r.add(named("Plugin", "first")).isOk());
  Status s = r.add(named("Plugin", "second"));
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "plugin \"Plugin\" is registered twice");
  EXPECT_EQ(tagOf(r, "Plugin"), "first");
  EXPECT_EQ(r.names(), std::vector<std::string>{"Plugin"});
}

TEST(Registry, RejectsARegistrationWithoutNameOrFactory) {
  framework::Registry r;
  EXPECT_EQ(r.add(named("", "x")).message(), "a plugin registration has no name");
  EXPECT_EQ(r.add(PluginRegistration{"Plugin", nullptr}).message(),
            "plugin \"Plugin\" is registered without a factory");
  EXPECT_TRUE(r.names().empty());
}

TEST(DefaultPlugins, EveryPluginIsRegisteredOnce) {
  framework::Registry r;
  plugins::registerDefaultPlugins(r);
  EXPECT_EQ(r.names(), (std::vector<std::string>{
                           "DefaultEvictor", "HighNodeUtilization", "LowNodeUtilization", "MakeRoomForPendingPods",
                           "PodLifeTime", "RemoveDuplicates", "RemoveFailedPods", "RemovePodsHavingTooManyRestarts",
                           "RemovePodsViolatingInterPodAntiAffinity", "RemovePodsViolatingNodeAffinity",
                           "RemovePodsViolatingNodeTaints", "RemovePodsViolatingTopologySpreadConstraint"}));
  // Only the kdesched-only plugin is marked so (`compat: upstream` refuses it).
  for (const std::string& name : r.names())
    EXPECT_EQ(r.find(name)->kdeschedOnly, name == "MakeRoomForPendingPods") << name;
}

TEST(DefaultPluginsDeathTest, RegisteringTwiceStopsWithTheName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  framework::Registry r;
  plugins::registerDefaultPlugins(r);
  EXPECT_DEATH(plugins::registerDefaultPlugins(r), "DefaultEvictor.* is registered twice");
}

}  // namespace
}  // namespace kdesched::testing
