#include "pkg/evictor/pdb_budget.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

TEST(PdbBudget, StatusBudgetIsSpentWithinACycle) {
  ClusterBuilder b;
  auto p1 = PodBuilder("a").app("web").node("n1").build();
  auto p2 = PodBuilder("b").app("web").node("n1").build();
  b.add(p1).add(p2).add(pdb("web", "default", selectorOf("app", "web"), 1));
  auto snap = b.snapshot();
  evictor::PdbBudget budget(*snap);
  EXPECT_TRUE(budget.check(*p1).allowed);
  budget.consume(*p1);
  auto c = budget.check(*p2);
  EXPECT_FALSE(c.allowed);
  EXPECT_EQ(c.pdb, "default/web");
  EXPECT_NE(c.detail.find("already spent by 1 eviction"), std::string::npos) << c.detail;
}

TEST(PdbBudget, TwoPdbsRefuseAsTheApiServerDoes) {
  ClusterBuilder b;
  auto p = PodBuilder("a").app("web").label("tier", "x").node("n1").build();
  b.add(p)
      .add(pdb("one", "default", selectorOf("app", "web"), 5))
      .add(pdb("two", "default", selectorOf("tier", "x"), 5));
  auto snap = b.snapshot();
  auto c = evictor::PdbBudget(*snap).check(*p);
  EXPECT_FALSE(c.allowed);
  EXPECT_NE(c.detail.find("more than one PodDisruptionBudget"), std::string::npos);
}

TEST(PdbBudget, PdbInAnotherNamespaceOrNilSelectorDoesNotMatch) {
  ClusterBuilder b;
  auto p = PodBuilder("a").app("web").node("n1").build();
  auto nilSel = std::make_shared<api::PodDisruptionBudget>(*pdb("nil", "default", {}, 0));
  nilSel->selector.reset();
  b.add(p)
      .add(pdb("other", "elsewhere", selectorOf("app", "web"), 0))
      .add(std::shared_ptr<const api::PodDisruptionBudget>(nilSel));
  auto snap = b.snapshot();
  EXPECT_TRUE(evictor::PdbBudget(*snap).check(*p).allowed);
}

TEST(PdbBudget, EmptySelectorMatchesEveryPodInNamespace) {
  ClusterBuilder b;
  auto p = PodBuilder("a").app("web").node("n1").build();
  b.add(p).add(pdb("all", "default", api::LabelSelector{}, 0));
  auto snap = b.snapshot();
  EXPECT_FALSE(evictor::PdbBudget(*snap).check(*p).allowed);
}

TEST(PdbBudget, PendingTerminatingAndTerminalPodsBypass) {
  ClusterBuilder b;
  auto pending = PodBuilder("a").app("web").phase(api::PodPhase::Pending).build();
  auto failed = PodBuilder("b").app("web").node("n1").phase(api::PodPhase::Failed).build();
  auto term = PodBuilder("c").app("web").node("n1").terminating().build();
  b.add(pending).add(failed).add(term).add(pdb("web", "default", selectorOf("app", "web"), 0));
  auto snap = b.snapshot();
  evictor::PdbBudget budget(*snap);
  EXPECT_TRUE(budget.check(*pending).allowed);
  EXPECT_TRUE(budget.check(*failed).allowed);
  EXPECT_TRUE(budget.check(*term).allowed);
}

TEST(PdbBudget, StaleStatusHasNoBudget) {
  ClusterBuilder b;
  auto p = PodBuilder("a").app("web").node("n1").build();
  auto stale = std::make_shared<api::PodDisruptionBudget>(*pdb("web", "default", selectorOf("app", "web"), 3));
  stale->generation = 2;
  b.add(p).add(std::shared_ptr<const api::PodDisruptionBudget>(stale));
  auto snap = b.snapshot();
  auto c = evictor::PdbBudget(*snap).check(*p);
  EXPECT_FALSE(c.allowed);
  EXPECT_NE(c.detail.find("not processed"), std::string::npos);
}

struct SpecCase {
  std::string name;
  std::optional<api::IntOrPercent> minAvailable, maxUnavailable;
  int readyPods, unreadyPods;
  int want;
};

class PdbFromSpec : public ::testing::TestWithParam<SpecCase> {};

TEST_P(PdbFromSpec, ComputesLikeTheDisruptionController) {
  const auto& c = GetParam();
  ClusterBuilder b;
  for (int i = 0; i < c.readyPods; ++i) b.add(PodBuilder("r" + std::to_string(i)).app("web").node("n1").build());
  for (int i = 0; i < c.unreadyPods; ++i)
    b.add(PodBuilder("u" + std::to_string(i)).app("web").node("n1").notReady().build());
  auto spec =
      std::make_shared<api::PodDisruptionBudget>(*pdb("web", "default", selectorOf("app", "web"), std::nullopt));
  spec->minAvailable = c.minAvailable;
  spec->maxUnavailable = c.maxUnavailable;
  b.add(std::shared_ptr<const api::PodDisruptionBudget>(spec));
  auto snap = b.snapshot();
  EXPECT_EQ(evictor::PdbBudget(*snap).allowedDisruptions(*snap->pdbs()[0]), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, PdbFromSpec,
    ::testing::Values(SpecCase{"minAvailable1_of3", api::IntOrPercent{false, 1}, {}, 3, 0, 2},
                      SpecCase{"minAvailable1_of1", api::IntOrPercent{false, 1}, {}, 1, 0, 0},
                      SpecCase{"minAvailable50pct_of3_rounds_up", api::IntOrPercent{true, 50}, {}, 3, 0, 1},
                      SpecCase{"maxUnavailable1_of3", {}, api::IntOrPercent{false, 1}, 3, 0, 1},
                      SpecCase{"maxUnavailable1_one_unready", {}, api::IntOrPercent{false, 1}, 2, 1, 0},
                      SpecCase{"maxUnavailable100pct", {}, api::IntOrPercent{true, 100}, 3, 0, 3},
                      SpecCase{"minAvailable_exceeds_pods", api::IntOrPercent{false, 5}, {}, 3, 0, 0}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kdesched::testing
