#include "pkg/base/log.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "test/unit/testing/fake_clock.h"

namespace kdesched::log {
namespace {

// A strict logfmt reader (the grammar go-logfmt reads): key=value pairs separated by spaces; a
// value is bare (no space, '=', quote or control character) or a quoted string with \" \\ \n \r
// \t \uXXXX escapes. Returns false on anything else, so a line that is not valid logfmt fails.
bool parseLogfmt(const std::string& line, std::vector<std::pair<std::string, std::string>>& out) {
  std::size_t i = 0;
  while (i < line.size()) {
    std::size_t eq = line.find('=', i);
    if (eq == std::string::npos || eq == i) return false;
    std::string key = line.substr(i, eq - i);
    for (unsigned char c : key)
      if (c <= ' ' || c == '"') return false;
    i = eq + 1;
    std::string value;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (static_cast<unsigned char>(c) < 0x20) return false;
        if (c != '\\') {
          value += c;
          continue;
        }
        if (i >= line.size()) return false;
        char e = line[i++];
        switch (e) {
          case '"': value += '"'; break;
          case '\\': value += '\\'; break;
          case 'n': value += '\n'; break;
          case 'r': value += '\r'; break;
          case 't': value += '\t'; break;
          case 'u': {
            if (i + 4 > line.size()) return false;
            value += static_cast<char>(std::stoi(line.substr(i, 4), nullptr, 16));
            i += 4;
            break;
          }
          default: return false;
        }
      }
      if (!closed) return false;
    } else {
      std::size_t end = line.find(' ', i);
      if (end == std::string::npos) end = line.size();
      value = line.substr(i, end - i);
      if (value.empty() || value.find('=') != std::string::npos || value.find('"') != std::string::npos) return false;
      i = end;
    }
    out.emplace_back(key, value);
    if (i < line.size()) {
      if (line[i] != ' ') return false;
      ++i;
    }
  }
  return true;
}

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_ = std::make_shared<testing::FakeClock>();
    setClock(clock_);
    setWriter([this](std::string_view line) { lines_.emplace_back(line); });
    setLevel(Level::Info);
  }
  void TearDown() override {
    setWriter(nullptr);
    setClock(nullptr);
    setFormat(Format::Text);
    setLevel(Level::Info);
  }
  std::shared_ptr<testing::FakeClock> clock_;
  std::vector<std::string> lines_;
};

const std::string kNasty = "pods \"x\" not found; a=b \\ back\nnext line\ttab \xC3\xA9t\xC3\xA9 \xE2\x9C\x93";

TEST_F(LogTest, TextIsValidLogfmtAndReadsBackExactly) {
  setFormat(Format::Text);
  info("eviction failed", {{"pod", "default/x"},
                           {"detail", kNasty},
                           {"empty", ""},
                           {"count", 3},
                           {"seconds", 0.25},
                           {"ok", true},
                           {"negative", -7}});
  ASSERT_EQ(lines_.size(), 1u);
  std::vector<std::pair<std::string, std::string>> kv;
  ASSERT_TRUE(parseLogfmt(lines_[0], kv)) << lines_[0];
  std::map<std::string, std::string> m(kv.begin(), kv.end());
  EXPECT_EQ(kv[0].first, "ts");
  EXPECT_EQ(m["ts"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(m["level"], "info");
  EXPECT_EQ(m["msg"], "eviction failed");
  EXPECT_EQ(m["pod"], "default/x");
  EXPECT_EQ(m["detail"], kNasty);
  EXPECT_EQ(m["empty"], "");
  EXPECT_EQ(m["count"], "3");
  EXPECT_EQ(m["seconds"], "0.25");
  EXPECT_EQ(m["ok"], "true");
  EXPECT_EQ(m["negative"], "-7");
  EXPECT_EQ(lines_[0].find('\n'), std::string::npos);
}

TEST_F(LogTest, JsonHasTypedValuesAndReadsBackExactly) {
  setFormat(Format::Json);
  info("eviction failed", {{"pod", "default/x"},
                           {"detail", kNasty},
                           {"count", 3},
                           {"big", std::uint64_t{1} << 63},
                           {"seconds", 0.25},
                           {"ok", false},
                           {"nan", std::nan("")}});
  ASSERT_EQ(lines_.size(), 1u);
  auto j = nlohmann::json::parse(lines_[0]);
  EXPECT_EQ(j["ts"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["msg"], "eviction failed");
  EXPECT_EQ(j["detail"], kNasty);
  EXPECT_TRUE(j["count"].is_number_integer());
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["big"].get<std::uint64_t>(), std::uint64_t{1} << 63);
  EXPECT_TRUE(j["seconds"].is_number_float());
  EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), 0.25);
  EXPECT_TRUE(j["ok"].is_boolean());
  EXPECT_EQ(j["nan"], "NaN");
}

TEST_F(LogTest, InvalidUtf8BecomesReplacementCharacterInBothFormats) {
  const std::string bad = std::string("ab\xFF") + "\xC3";  // a stray byte and a cut sequence
  setFormat(Format::Json);
  info(bad, {{"v", bad}});
  auto j = nlohmann::json::parse(lines_.at(0));  // throws on invalid UTF-8
  EXPECT_EQ(j["msg"], "ab\xEF\xBF\xBD\xEF\xBF\xBD");
  setFormat(Format::Text);
  info("m", {{"v", bad}});
  std::vector<std::pair<std::string, std::string>> kv;
  ASSERT_TRUE(parseLogfmt(lines_.at(1), kv));
  EXPECT_EQ(kv.back().second, "ab\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(LogTest, LevelsFilterAndTimestampsFollowTheClock) {
  setFormat(Format::Text);
  ASSERT_TRUE(setup("text", 0).isOk());
  debug("hidden");
  clock_->advance(std::chrono::milliseconds(1500));
  warn("shown");
  ASSERT_EQ(lines_.size(), 1u);
  // The message is always quoted, so `msg="stopped"` greps the same whatever the message.
  EXPECT_EQ(lines_[0], "ts=2026-01-01T00:00:01.500Z level=warn msg=\"shown\"");
  ASSERT_TRUE(setup("json", 3).isOk());
  debug("now shown");
  EXPECT_EQ(lines_.size(), 2u);
  EXPECT_FALSE(setup("xml", 0).isOk());
}

}  // namespace
}  // namespace kdesched::log
