// PodLifeTime through the real engine and plan sink: each criterion, its limits, the evictor's
// filters and limits, a PDB, the order, and upstream's quirks.
#include "pkg/plugins/podlifetime/podlifetime.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "test/unit/testing/builders.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using PodPtr = std::shared_ptr<const api::Pod>;
using api::PodPhase;

const char* kPlugin = "PodLifeTime";
constexpr api::Timestamp kNow = 100000;  // the harness's pinned wall clock
const std::string kMaxHour = "      maxPodLifeTimeSeconds: 3600\n";

struct Case {
  std::string name;
  std::vector<PodPtr> pods;
  std::string pluginArgs;
  std::vector<std::string> wantEvicted;
  std::string topLevel = "";
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs = {};
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// A pod on `node` created `age` seconds before kNow.
PodBuilder aged(std::string name, api::Timestamp age, std::string node = "node1") {
  return PodBuilder(std::move(name)).node(node).created(kNow - age);
}

class PodLifeTimeTest : public ::testing::TestWithParam<Case> {};

TEST_P(PodLifeTimeTest, Evicts) {
  const Case& c = GetParam();
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build());
  b.add(NodeBuilder("node2").build());
  for (auto& p : c.pods) b.add(p);
  for (auto& p : c.pdbs) b.add(p);
  auto out = runPolicy(policyWith(kPlugin, "deschedule", c.pluginArgs, "", c.topLevel), *b.snapshot(), kNow);
  EXPECT_EQ(out.evicted, c.wantEvicted);
}

std::vector<Case> ageCases() {
  std::vector<Case> cs;
  cs.push_back({"old pod evicted, young kept",
                {aged("old", 7260).build(), aged("young", 60).build()},
                kMaxHour,
                {"default/old"}});
  // uint(age.Seconds()) > max: an age of exactly the maximum is not over it.
  cs.push_back({"age equal to the maximum is kept",
                {aged("edge", 3600).build(), aged("over", 3601).build()},
                kMaxHour,
                {"default/over"}});
  cs.push_back({"maxPodLifeTimeSeconds 0 evicts any pod a second old",
                {aged("now", 0).build(), aged("second", 1).build()},
                "      maxPodLifeTimeSeconds: 0\n",
                {"default/second"}});
  cs.push_back({"created in the future is not old", {aged("future", -7200).build()}, kMaxHour, {}});
  cs.push_back({"oldest first across nodes",
                {aged("a", 4000).build(), aged("b", 9000, "node2").build(), aged("c", 5000, "node2").build()},
                kMaxHour,
                {"default/b", "default/c", "default/a"}});
  cs.push_back(
      {"pods of every phase",
       {aged("done", 7200).phase(PodPhase::Succeeded).build(), aged("failed", 7200).phase(PodPhase::Failed).build(),
        aged("pending", 7200).phase(PodPhase::Pending).build()},
       kMaxHour,
       {"default/done", "default/failed", "default/pending"}});
  cs.push_back({"evictor's filters apply: DaemonSet pod kept",
                {aged("ds", 7200).owner("DaemonSet", "ds").build(), aged("rs", 7200).build()},
                kMaxHour,
                {"default/rs"}});
  cs.push_back({"total limit keeps the youngest",
                {aged("young", 4000).build(), aged("oldest", 9000, "node2").build()},
                kMaxHour,
                {"default/oldest"},
                "maxNoOfPodsToEvictTotal: 1\n"});
  cs.push_back({"per-node limit moves on to the next pod",
                {aged("a", 9000).build(), aged("b", 8000).build(), aged("c", 7000, "node2").build()},
                kMaxHour,
                {"default/a", "default/c"},
                "maxNoOfPodsToEvictPerNode: 1\n"});
  cs.push_back(
      {"total limit 0 evicts nothing", {aged("a", 9000).build()}, kMaxHour, {}, "maxNoOfPodsToEvictTotal: 0\n"});
  cs.push_back({"a PodDisruptionBudget refuses one pod, the next is evicted",
                {aged("guarded", 9000).app("web").build(), aged("free", 8000).build()},
                kMaxHour,
                {"default/free"},
                "",
                {pdb("web", "default", selectorOf("app", "web"), 0)}});
  cs.push_back({"namespaces and labelSelector",
                {PodBuilder("a", "shop").node("node1").created(kNow - 9000).app("web").build(),
                 PodBuilder("b", "shop").node("node1").created(kNow - 9000).app("db").build(),
                 PodBuilder("c", "other").node("node1").created(kNow - 9000).app("web").build()},
                kMaxHour + "      namespaces: {include: [shop]}\n      labelSelector: {matchLabels: {app: web}}\n",
                {"shop/a"}});
  cs.push_back({"ownerKinds include",
                {aged("job", 9000).owner("Job", "j").build(), aged("rs", 9000).build()},
                kMaxHour + "      ownerKinds: {include: [Job]}\n",
                {"default/job"}});
  cs.push_back({"ownerKinds exclude",
                {aged("job", 9000).owner("Job", "j").build(), aged("rs", 9000).build()},
                kMaxHour + "      ownerKinds: {exclude: [ReplicaSet]}\n",
                {"default/job"}});
  return cs;
}

std::vector<Case> statusCases() {
  std::vector<Case> cs;
  cs.push_back({"states: phase",
                {aged("pending", 10).phase(PodPhase::Pending).build(), aged("running", 10).build()},
                "      states: [Pending]\n",
                {"default/pending"}});
  cs.push_back({"states: status reason",
                {aged("lost", 10).statusReason("NodeLost").build(), aged("fine", 10).build()},
                "      states: [NodeLost]\n",
                {"default/lost"}});
  cs.push_back({"states: waiting and terminated reasons of regular containers",
                {aged("crash", 10).restarts(3).waitingReason("CrashLoopBackOff").build(),
                 aged("oom", 10).restarts(1).terminatedReason("OOMKilled", 137).build(), aged("fine", 10).build()},
                "      states: [CrashLoopBackOff, OOMKilled]\n",
                {"default/crash", "default/oom"}});
  auto initCrash = [] { return aged("init", 10).initStatus(2).waitingReason("CrashLoopBackOff").build(); };
  auto ephemeralCrash = [] { return aged("debug", 10).ephemeralStatus().waitingReason("CrashLoopBackOff").build(); };
  cs.push_back({"states: init and ephemeral containers ignored by default",
                {initCrash(), ephemeralCrash()},
                "      states: [CrashLoopBackOff]\n",
                {}});
  cs.push_back({"states: includingInitContainers",
                {initCrash(), ephemeralCrash()},
                "      states: [CrashLoopBackOff]\n      includingInitContainers: true\n",
                {"default/init"}});
  cs.push_back({"states: includingEphemeralContainers",
                {initCrash(), ephemeralCrash()},
                "      states: [CrashLoopBackOff]\n      includingEphemeralContainers: true\n",
                {"default/debug"}});
  cs.push_back({"every criterion set must match: old but not in the state",
                {aged("old-running", 9000).build(), aged("old-pending", 9000).phase(PodPhase::Pending).build(),
                 aged("young-pending", 10).phase(PodPhase::Pending).build()},
                kMaxHour + "      states: [Pending]\n",
                {"default/old-pending"}});
  // minTimeSinceLastTransitionSeconds compares inclusively (idle < min does not match).
  cs.push_back({"conditions: minTimeSinceLastTransitionSeconds, inclusive",
                {aged("at", 9000).condition("Ready", "False", "", kNow - 600).build(),
                 aged("under", 9000).condition("Ready", "False", "", kNow - 599).build(),
                 aged("ready", 9000).condition("Ready", "True", "", kNow - 9000).build(),
                 aged("untimed", 9000).condition("Ready", "False").build(),
                 aged("future", 9000).condition("Ready", "False", "", kNow + 600).build()},
                "      conditions:\n      - {type: Ready, status: \"False\", minTimeSinceLastTransitionSeconds: 600}\n",
                {"default/at"}});
  cs.push_back({"conditions: any filter, reason only",
                {aged("a", 10).condition("PodScheduled", "False", "Unschedulable").build(),
                 aged("b", 10).condition("DisruptionTarget", "True", "EvictionByEvictionAPI").build(),
                 aged("c", 10).condition("PodScheduled", "True").build()},
                "      conditions:\n      - {reason: Unschedulable}\n      - {type: DisruptionTarget}\n",
                {"default/a", "default/b"}});
  cs.push_back(
      {"exitCodes: regular containers; init only when included; ephemeral never",
       {aged("regular", 10).restarts(0).exitCode(137).build(), aged("init", 10).initStatus().exitCode(137).build(),
        aged("debug", 10).ephemeralStatus().exitCode(137).build(), aged("other", 10).restarts(0).exitCode(1).build()},
       "      exitCodes: [137]\n      includingInitContainers: false\n      includingEphemeralContainers: true\n",
       {"default/regular"}});
  cs.push_back({"exitCodes: includingInitContainers",
                {aged("init", 10).initStatus().exitCode(137).build()},
                "      exitCodes: [137]\n      includingInitContainers: true\n",
                {"default/init"}});
  return cs;
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
  std::string n;
  for (char ch : info.param.name) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return n + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Age, PodLifeTimeTest, ::testing::ValuesIn(ageCases()), caseName);
INSTANTIATE_TEST_SUITE_P(Status, PodLifeTimeTest, ::testing::ValuesIn(statusCases()), caseName);

TEST(PodLifeTime, ReasonsSayWhatMatched) {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build());
  b.add(NodeBuilder("node2").build());  // one node alone aborts the cycle, as upstream
  b.add(aged("p", 7260)
            .restarts(4)
            .waitingReason("CrashLoopBackOff")
            .condition("Ready", "False", "", kNow - 900)
            .build());
  auto out = runPolicy(policyWith(kPlugin, "deschedule",
                                  kMaxHour + "      states: [CrashLoopBackOff]\n      conditions:\n"
                                             "      - {type: Ready, minTimeSinceLastTransitionSeconds: 300}\n"),
                       *b.snapshot(), kNow);
  ASSERT_EQ(out.reasons.size(), 1u);
  EXPECT_EQ(out.reasons[0],
            "pod is 2h1m old, maxPodLifeTimeSeconds is 3600; container is waiting with reason CrashLoopBackOff; "
            "condition Ready=False for 15m, minTimeSinceLastTransitionSeconds is 300");
}

TEST(PodLifeTime, AgeFollowsThePinnedClock) {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build());
  b.add(NodeBuilder("node2").build());  // one node alone aborts the cycle, as upstream
  b.add(aged("p", 3000).build());
  auto policy = policyWith(kPlugin, "deschedule", kMaxHour);
  EXPECT_TRUE(runPolicy(policy, *b.snapshot(), kNow).evicted.empty());
  EXPECT_EQ(runPolicy(policy, *b.snapshot(), kNow + 601).evicted, std::vector<std::string>{"default/p"});
}

// kdesched's lifetime jitter: twenty pods of one rollout, created in the same second, each kept
// until its own lifetime (maxPodLifeTimeSeconds plus its share of the jitter) has passed and
// evicted the second after; the shares spread over the jitter.
const std::string kJitter10m = "kdesched:\n  podLifeTime: {jitter: 10m}\n";

PodPtr rolloutPod(int i) {
  return PodBuilder("web-" + std::to_string(i))
      .node("node1")
      .uid("6f1c2a9e-0000-4000-8000-00000000" + std::to_string(1000 + i))
      .created(kNow)
      .build();
}

TEST(PodLifeTime, JitterGivesEachPodItsOwnDeadline) {
  const plugins::podlifetime::LifetimeJitter jitter{600};
  std::set<std::uint64_t> shares;
  for (int i = 0; i < 20; ++i) {
    ClusterBuilder b;
    b.add(NodeBuilder("node1").build());
    b.add(NodeBuilder("node2").build());
    auto pod = rolloutPod(i);
    b.add(pod);
    const std::uint64_t extra = jitter.extraSeconds(*pod);
    ASSERT_LT(extra, 600u);
    shares.insert(extra);
    const auto ends = kNow + 3600 + static_cast<api::Timestamp>(extra);
    auto policy = policyWith(kPlugin, "deschedule", kMaxHour, "", kJitter10m);
    EXPECT_TRUE(runPolicy(policy, *b.snapshot(), ends).evicted.empty()) << pod->name << " +" << extra;
    EXPECT_EQ(runPolicy(policy, *b.snapshot(), ends + 1).evicted, std::vector<std::string>{"default/" + pod->name})
        << pod->name << " +" << extra;
  }
  EXPECT_GE(shares.size(), 15u);
  EXPECT_GE(*shares.rbegin() - *shares.begin(), 300u);
}

// A function of the UID alone: the same pod read again (another process, a plan) gets the same
// share; the pinned value catches a change of the function, which would move every deadline.
TEST(PodLifeTime, JitterIsAStableFunctionOfTheUid) {
  const plugins::podlifetime::LifetimeJitter jitter{600};
  auto a = rolloutPod(7);
  auto again = PodBuilder("other-name").uid(a->uid.str()).created(kNow - 50).build();
  EXPECT_EQ(jitter.extraSeconds(*a), jitter.extraSeconds(*again));
  EXPECT_EQ(plugins::podlifetime::stableHash("a"), 0xaf63dc4c8601ec8cULL);  // FNV-1a 64
  EXPECT_EQ(plugins::podlifetime::LifetimeJitter{}.extraSeconds(*a), 0u);
}

TEST(PodLifeTime, CompatUpstreamHasNoJitter) {
  ClusterBuilder b;
  b.add(NodeBuilder("node1").build());
  b.add(NodeBuilder("node2").build());
  auto pod = rolloutPod(3);
  ASSERT_GT(plugins::podlifetime::LifetimeJitter{600}.extraSeconds(*pod), 0u);
  b.add(pod);
  auto out = runPolicy(policyWith(kPlugin, "deschedule", kMaxHour, "", kJitter10m + "  compat: upstream\n"),
                       *b.snapshot(), kNow + 3601);
  EXPECT_EQ(out.evicted, std::vector<std::string>{"default/web-3"});
}

// The reason and the skip say the pod's own deadline where they say the lifetime.
TEST(PodLifeTime, JitterIsSaidWithTheDeadline) {
  plugins::podlifetime::Args args;
  args.maxPodLifeTimeSeconds = 3600;
  const plugins::podlifetime::LifetimeJitter jitter{600};
  auto pod = rolloutPod(5);
  const std::uint64_t extra = jitter.extraSeconds(*pod);
  ASSERT_GT(extra, 0u);
  plugins::podlifetime::PodLifeTime plugin(args, jitter, framework::WallSeconds::pinned(kNow));
  const auto ends = kNow + 3600 + static_cast<api::Timestamp>(extra);
  const auto daySeconds = ends - 86400;  // kNow is on 1970-01-02
  const std::string endsText =
      fmt::format("1970-01-02T{:02}:{:02}:{:02}Z", daySeconds / 3600, daySeconds % 3600 / 60, daySeconds % 60);
  auto skip = plugin.judge(*pod, ends);
  ASSERT_FALSE(skip.isCandidate());
  const std::string lifetime =
      "maxPodLifeTimeSeconds is 3600 (1h) plus jitter " + plugins::podlifetime::formatAge(extra) + ": lifetime ends ";
  EXPECT_NE(skip.reason.text().find(lifetime + endsText), std::string::npos) << skip.reason.text();
  auto evict = plugin.judge(*pod, ends + 1);
  ASSERT_TRUE(evict.isCandidate());
  EXPECT_EQ(evict.reason.text(), "pod is " + plugins::podlifetime::formatAge(3601 + extra) +
                                     " old, maxPodLifeTimeSeconds is 3600 plus jitter " +
                                     plugins::podlifetime::formatAge(extra) + ": lifetime ends " + endsText);
  EXPECT_EQ(plugin.eligibleAt(*pod, kNow), ends + 1);
}

TEST(PodLifeTime, FormatsAges) {
  using plugins::podlifetime::formatAge;
  EXPECT_EQ(formatAge(0), "0s");
  EXPECT_EQ(formatAge(59), "59s");
  EXPECT_EQ(formatAge(3600), "1h");
  EXPECT_EQ(formatAge(7261), "2h1m1s");
  EXPECT_EQ(formatAge(90061), "25h1m1s");
}

// The daemon's cache keeps pod conditions only when a plugin reads them: PodLifeTime with
// `conditions` does, PodLifeTime by age or state alone and the other strategies do not.
TEST(PodLifeTime, ReadsPodConditionsOnlyWithConditions) {
  auto withConditions = engineFor(
      policyWith("PodLifeTime", "deschedule", "      conditions:\n      - type: Ready\n        status: \"False\"\n"));
  ASSERT_TRUE(withConditions.isOk()) << withConditions.error();
  EXPECT_TRUE(withConditions->readsPodConditions());
  auto byAge = engineFor(policyWith("PodLifeTime", "deschedule", "      maxPodLifeTimeSeconds: 60\n"));
  ASSERT_TRUE(byAge.isOk()) << byAge.error();
  EXPECT_FALSE(byAge->readsPodConditions());
  auto other = engineFor(policyWith("RemovePodsViolatingInterPodAntiAffinity", "deschedule"));
  ASSERT_TRUE(other.isOk()) << other.error();
  EXPECT_FALSE(other->readsPodConditions());
}

}  // namespace
}  // namespace kdesched::testing
