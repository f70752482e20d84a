#include "pkg/daemon/logging.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace kdesched::daemon {
namespace {

nlohmann::ordered_json parse(std::string_view line) { return nlohmann::ordered_json::parse(keyValuesToJson(line)); }

TEST(KeyValuesToJson, QuotedMessageAndFields) {
  auto j = parse(R"(msg="cycle finished" evicted=1 refused=0 detail="a \"quoted\" word")");
  EXPECT_EQ(j.dump(), R"({"msg":"cycle finished","evicted":"1","refused":"0","detail":"a \"quoted\" word"})");
}

TEST(KeyValuesToJson, LeadingBareWordsBecomeTheMessage) {
  // pkg/kube's reflector and client log this way.
  auto j = parse("reflector listed resource=pods objects=3 rv=42 seconds=0.010");
  EXPECT_EQ(j.dump(), R"({"msg":"reflector listed","resource":"pods","objects":"3","rv":"42","seconds":"0.010"})");
}

TEST(KeyValuesToJson, PlainTextIsTheMessage) {
  EXPECT_EQ(parse("just some words").dump(), R"({"msg":"just some words"})");
  EXPECT_EQ(parse("").dump(), "{}");
}

TEST(KeyValuesToJson, StrayWordsNextToAMessageGoToText) {
  auto j = parse(R"(msg="x" a=1 stray words b=2)");
  EXPECT_EQ(j.dump(), R"({"msg":"x","a":"1","b":"2","text":"stray words"})");
}

}  // namespace
}  // namespace kdesched::daemon
