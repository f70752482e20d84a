// A pod whose toleration uses Gt/Lt (TaintTolerationComparisonOperators) or an operator this build
// does not know must not fail its LIST page or WATCH event: one such pod would otherwise keep the
// pod cache from ever syncing.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "pkg/kube/wire.h"

namespace kdesched::kube {
namespace {

std::string pod(const std::string& name, const std::string& op) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default","resourceVersion":"7"},)" +
         R"("spec":{"nodeName":"n1","tolerations":[{"key":"node.example.com/sla","operator":")" + op +
         R"(","value":"950","effect":"NoSchedule"}]}})";
}

api::TolerationOp opOf(const api::Object& o) { return std::get<api::Pod>(o).constraints().tolerations.at(0).op; }

TEST(WireTolerations, ListPageWithComparisonAndUnknownOperators) {
  std::string body = R"({"kind":"PodList","metadata":{"resourceVersion":"9"},"items":[)" + pod("gt", "Gt") + "," +
                     pod("lt", "Lt") + "," + pod("future", "Between") + "]}";
  ListPage page;
  Status st = decodeListPage(api::Kind::Pod, body, page);
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_EQ(page.objects.size(), 3u);
  EXPECT_EQ(opOf(page.objects[0]), api::TolerationOp::Gt);
  EXPECT_EQ(opOf(page.objects[1]), api::TolerationOp::Lt);
  EXPECT_EQ(opOf(page.objects[2]), api::TolerationOp::Unknown);
  EXPECT_EQ(page.resourceVersion, "9");
}

TEST(WireTolerations, WatchEventWithGt) {
  api::JsonParser parser;
  WatchEvent ev;
  std::string line = R"({"type":"ADDED","object":)" + pod("gt", "Gt") + "}";
  Status st = decodeWatchEvent(api::Kind::Pod, line, parser, ev);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(ev.type, WatchEventType::Added);
  EXPECT_EQ(opOf(ev.object), api::TolerationOp::Gt);
  EXPECT_EQ(std::get<api::Pod>(ev.object).constraints().tolerations.at(0).value, "950");
}

}  // namespace
}  // namespace kdesched::kube
