#include "pkg/plugins/common/pod_list_filter.h"

#include <gtest/gtest.h>

#include "test/unit/plugins/args_testing.h"
#include "test/unit/testing/builders.h"

namespace kdesched::testing {
namespace {

using plugins::PodListFilter;

Result<PodListFilter> read(const std::string& yaml) {
  policy::ArgsReader r(rawArgs("SomePlugin", yaml));
  PodListFilter f;
  KD_TRY(plugins::readPodListFilter(r, f));
  KD_TRY(r.finish());
  return f;
}

TEST(PodListFilter, UnsetListsEveryPod) {
  auto f = read("");
  ASSERT_TRUE(f.isOk()) << f.error();
  EXPECT_FALSE(f->namespaces.has_value());
  EXPECT_FALSE(f->labelSelector.has_value());
  EXPECT_TRUE(f->allows(*PodBuilder("p", "any").label("app", "x").build()));
}

TEST(PodListFilter, NamespacesAndLabelSelectorMustBothAllow) {
  auto include = read("namespaces: {include: [shop]}\nlabelSelector: {matchLabels: {app: web}}");
  ASSERT_TRUE(include.isOk()) << include.error();
  EXPECT_TRUE(include->allows(*PodBuilder("p", "shop").label("app", "web").build()));
  EXPECT_FALSE(include->allows(*PodBuilder("p", "other").label("app", "web").build()));
  EXPECT_FALSE(include->allows(*PodBuilder("p", "shop").label("app", "db").build()));

  auto exclude = read("namespaces: {exclude: [kube-system]}");
  ASSERT_TRUE(exclude.isOk()) << exclude.error();
  EXPECT_TRUE(exclude->allows(*PodBuilder("p", "shop").build()));
  EXPECT_FALSE(exclude->allows(*PodBuilder("p", "kube-system").build()));
}

TEST(PodListFilter, ErrorsNameTheField) {
  auto both = read("namespaces: {include: [a], exclude: [b]}");
  ASSERT_FALSE(both.isOk());
  EXPECT_EQ(both.error(), std::string(kArgsPath) + ".namespaces: only one of Include/Exclude namespaces can be set");
  auto selector = read("labelSelector: {matchLabels: [app]}");
  ASSERT_FALSE(selector.isOk());
  EXPECT_EQ(selector.error().rfind(std::string(kArgsPath) + ".labelSelector.matchLabels: ", 0), 0u) << selector.error();
}

}  // namespace
}  // namespace kdesched::testing
