#include "pkg/trigger/carriers.h"

#include <gtest/gtest.h>

#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

api::PodAffinityTerm term(std::vector<api::LabelSelectorRequirement> exprs,
                          std::vector<std::pair<std::string, std::string>> labels = {}) {
  api::PodAffinityTerm t;
  t.labelSelector = api::LabelSelector{std::move(labels), std::move(exprs)};
  t.topologyKey = "kubernetes.io/hostname";
  return t;
}

TEST(CarrierKeysTest, ATermNeedsItsFirstPositiveRequirement) {
  trigger::CarrierKeys k;
  const auto pay = PodBuilder("pay").app("payment").antiAffinity("app", "order").build();
  EXPECT_FALSE(k.mightSelect(api::Labels{{"app", "order"}}));
  k.add(*pay);
  EXPECT_TRUE(k.mightSelect(api::Labels{{"app", "order"}, {"tier", "x"}}));
  EXPECT_FALSE(k.mightSelect(api::Labels{{"app", "web"}}));
  EXPECT_FALSE(k.mightSelect(api::Labels{{"tier", "order"}}));
  k.remove(*pay);
  EXPECT_FALSE(k.mightSelect(api::Labels{{"app", "order"}}));
  EXPECT_TRUE(k.empty());
}

TEST(CarrierKeysTest, MatchLabelKeysTakeTheCarriersValue) {
  trigger::CarrierKeys k;
  api::PodAffinityTerm t = term({{"x", api::LabelSelectorOp::NotIn, {"1"}}});
  t.matchLabelKeys = {"missing", "pod-template-hash"};
  k.add(*PodBuilder("a").label("pod-template-hash", "abc").antiAffinityTerm(t).build());
  EXPECT_TRUE(k.mightSelect(api::Labels{{"pod-template-hash", "abc"}}));
  EXPECT_FALSE(k.mightSelect(api::Labels{{"pod-template-hash", "def"}}));
}

TEST(CarrierKeysTest, ExpressionsAndWildcards) {
  trigger::CarrierKeys k;
  // NotIn first, then Exists: the Exists key is required; an In: any of its values.
  k.add(*PodBuilder("in").antiAffinityTerm(term({{"zone", api::LabelSelectorOp::In, {"a", "b"}}})).build());
  EXPECT_TRUE(k.mightSelect(api::Labels{{"zone", "b"}}));
  EXPECT_FALSE(k.mightSelect(api::Labels{{"zone", "c"}}));
  const auto a = PodBuilder("a")
                     .antiAffinityTerm(
                         term({{"x", api::LabelSelectorOp::NotIn, {"1"}}, {"tier", api::LabelSelectorOp::Exists, {}}}))
                     .build();
  k.add(*a);
  EXPECT_TRUE(k.mightSelect(api::Labels{{"tier", "db"}}));
  EXPECT_FALSE(k.mightSelect(api::Labels{{"x", "2"}}));
  // Only DoesNotExist: selects pods without the key, so any pod.
  const auto b = PodBuilder("b").antiAffinityTerm(term({{"y", api::LabelSelectorOp::DoesNotExist, {}}})).build();
  k.add(*b);
  EXPECT_TRUE(k.mightSelect(api::Labels{{"x", "2"}}));
  EXPECT_TRUE(k.mightSelect(api::Labels{}));
  k.remove(*b);
  EXPECT_FALSE(k.mightSelect(api::Labels{{"x", "2"}}));
  // An empty selector selects every pod; no selector selects none.
  const auto c = PodBuilder("c").antiAffinityTerm(term({})).build();
  k.add(*c);
  EXPECT_TRUE(k.mightSelect(api::Labels{}));
  k.remove(*c);
  api::PodAffinityTerm none;
  none.topologyKey = "kubernetes.io/hostname";
  k.add(*PodBuilder("d").antiAffinityTerm(none).build());
  EXPECT_FALSE(k.mightSelect(api::Labels{}));
}

TEST(CarrierKeysTest, TwoCarriersOfOneRequirementCountTwice) {
  trigger::CarrierKeys k;
  const auto p1 = PodBuilder("p1").antiAffinity("app", "cart").build();
  const auto p2 = PodBuilder("p2").antiAffinity("app", "cart").build();
  k.add(*p1);
  k.add(*p2);
  k.remove(*p1);
  EXPECT_TRUE(k.mightSelect(api::Labels{{"app", "cart"}}));
  k.remove(*p2);
  EXPECT_FALSE(k.mightSelect(api::Labels{{"app", "cart"}}));
}

TEST(CarrierKeysTest, AnUpdateRecountsOnlyWhatItChanged) {
  trigger::CarrierKeys k;
  api::PodAffinityTerm t = term({});
  t.labelSelector->matchLabels = {{"app", "cart"}};
  api::PodAffinityTerm byHash = term({{"x", api::LabelSelectorOp::NotIn, {"1"}}});
  byHash.matchLabelKeys = {"pod-template-hash"};
  const auto before =
      PodBuilder("p").label("pod-template-hash", "abc").antiAffinityTerm(t).antiAffinityTerm(byHash).build();
  k.add(*before);
  // A copy shares the constraints block; its new label is what the matchLabelKeys term reads.
  api::Pod after = *before;
  after.labels = api::Labels{{"pod-template-hash", "def"}};
  ASSERT_EQ(&after.constraints(), &before->constraints());
  k.update(*before, after);
  EXPECT_TRUE(k.mightSelect(api::Labels{{"pod-template-hash", "def"}}));
  EXPECT_FALSE(k.mightSelect(api::Labels{{"pod-template-hash", "abc"}}));
  api::Pod same = after;
  same.phase = api::PodPhase::Running;
  k.update(after, same);  // nothing to recount
  // A new constraints block without the terms takes the old ones out, once.
  const auto plain = PodBuilder("p").build();
  k.update(same, *plain);
  EXPECT_TRUE(k.empty());
}

}  // namespace
}  // namespace kdesched::testing
