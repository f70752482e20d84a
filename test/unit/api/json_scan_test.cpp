// The strict JSON scan in front of the snapshot decoder: every byte checked, errors with the
// offset they point at, concatenated documents split.
#include "pkg/api/json_scan.h"

#include <gtest/gtest.h>

#include <string>

#include "pkg/api/text_input.h"

namespace kdesched::api {
namespace {

TEST(JsonScan, SplitsConcatenatedDocuments) {
  const std::string text = " {\"a\":[1,2.5e3,-0,\"x\\u00e9\\n\"]}\n[true,false,null]{} ";
  JsonScan scan = scanJsonStream(text);
  ASSERT_FALSE(scan.error) << scan.error->message;
  ASSERT_EQ(scan.documents.size(), 3u);
  EXPECT_EQ(text.substr(scan.documents[0].begin, scan.documents[0].end - scan.documents[0].begin),
            "{\"a\":[1,2.5e3,-0,\"x\\u00e9\\n\"]}");
  EXPECT_EQ(text.substr(scan.documents[1].begin, scan.documents[1].end - scan.documents[1].begin), "[true,false,null]");
  EXPECT_EQ(text.substr(scan.documents[2].begin, scan.documents[2].end - scan.documents[2].begin), "{}");
  EXPECT_TRUE(scanJsonStream("  \n").documents.empty());
}

std::string spanText(const std::string& text, JsonSpan s) { return text.substr(s.begin, s.end - s.begin); }

// The loader decodes a list one item at a time from these spans.
TEST(JsonScan, FindsTheItemsOfAListAndOfARootArray) {
  const std::string text = R"({"kind":"List","metadata":{"items":[9]},"items":[ {"a":[1,{}]} , "s",[],3 ],"x":[5]})"
                           "\n[{\"b\":1},{}] {\"kind\":\"Pod\",\"spec\":{\"items\":[1]}} {\"items\":[]}";
  JsonScan scan = scanJsonStream(text);
  ASSERT_FALSE(scan.error) << scan.error->message;
  ASSERT_EQ(scan.items.size(), 4u);
  const JsonItems& list = scan.items[0];
  ASSERT_TRUE(list.found);
  EXPECT_EQ(spanText(text, list.array), R"([ {"a":[1,{}]} , "s",[],3 ])");
  ASSERT_EQ(list.elements.size(), 4u);
  EXPECT_EQ(spanText(text, list.elements[0]), R"({"a":[1,{}]})");
  EXPECT_EQ(spanText(text, list.elements[1]), R"("s")");
  EXPECT_EQ(spanText(text, list.elements[2]), "[]");
  EXPECT_EQ(spanText(text, list.elements[3]), "3");
  ASSERT_TRUE(scan.items[1].found);
  EXPECT_EQ(spanText(text, scan.items[1].array), R"([{"b":1},{}])");
  ASSERT_EQ(scan.items[1].elements.size(), 2u);
  EXPECT_EQ(spanText(text, scan.items[1].elements[1]), "{}");
  EXPECT_FALSE(scan.items[2].found);  // "items" deeper than the root object's members is not the list
  ASSERT_TRUE(scan.items[3].found);
  EXPECT_EQ(spanText(text, scan.items[3].array), "[]");
  EXPECT_TRUE(scan.items[3].elements.empty());
}

struct Bad {
  std::string name;
  std::string text;
  std::string position;  // textPosition of the offset the error points at
  std::string message;
  bool unquotedWord = false;
  friend void PrintTo(const Bad& b, std::ostream* os) { *os << b.name; }
};

class JsonScanBad : public ::testing::TestWithParam<Bad> {};

TEST_P(JsonScanBad, NamesWhatAndWhere) {
  const Bad& c = GetParam();
  JsonScan scan = scanJsonStream(c.text);
  ASSERT_TRUE(scan.error) << c.text;
  EXPECT_EQ(scan.error->message, c.message);
  EXPECT_EQ(textPosition(c.text, scan.error->offset), c.position);
  EXPECT_EQ(scan.error->unquotedWord, c.unquotedWord);
}

INSTANTIATE_TEST_SUITE_P(
    Table, JsonScanBad,
    ::testing::Values(
        // A broken value inside a field the decoder skips used to pass.
        Bad{"skipped_field_broken", "{\"kind\":\"List\",\n \"x\": {\"a\" 1},\"items\":[]}", "line 2, column 12",
            "expected ':' after the object key, found '1'"},
        Bad{"missing_comma", "{\"a\":1\n\"b\":2}", "line 2, column 1",
            "expected ',' or '}' after an object member, found '\"'"},
        Bad{"trailing_comma", "[1,2,]", "line 1, column 6", "expected a value, found ']'"},
        Bad{"truncated", "{\"items\":[{\"a\":", "line 1, column 16", "unexpected end of the file: expected a value"},
        Bad{"unclosed_string", "{\"a\":\"abc", "line 1, column 6", "a string that is never closed"},
        Bad{"raw_newline_in_string", "{\"a\":\"ab\ncd\"}", "line 1, column 9",
            "a control character (byte 0x0a) inside a string: it must be escaped"},
        Bad{"bad_escape", "{\"a\":\"\\q\"}", "line 1, column 7", "unknown escape \\q in a string"},
        Bad{"short_unicode_escape", "{\"a\":\"\\u12\"}", "line 1, column 7", "\\u must be followed by four hex digits"},
        Bad{"not_utf8", "{\"a\":\"\xC3\x28\"}", "line 1, column 7",
            "text that is not UTF-8 (byte 0xc3): the file must be UTF-8"},
        Bad{"leading_zero", "[012]", "line 1, column 2", "not a JSON number: '012'"},
        Bad{"bare_minus", "[-]", "line 1, column 3", "a number needs digits after '-'"},
        Bad{"text_after_document", "{}\nnot json", "line 2, column 1",
            "unexpected 'not' after the JSON document that ends at byte 2"},
        Bad{"flow_style_key", "{kind: List}", "line 1, column 2",
            "expected a string in double quotes as the object key, found 'kind'", true},
        Bad{"flow_style_value", "[a, b]", "line 1, column 2", "expected a value, found 'a'", true}),
    [](const auto& info) { return info.param.name; });

TEST(JsonScan, NestingIsBounded) {
  const std::string deep = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_FALSE(scanJsonStream(deep).error);
  const std::string deeper = "[" + deep + "]";
  JsonScan scan = scanJsonStream(deeper);
  ASSERT_TRUE(scan.error);
  EXPECT_EQ(scan.error->message, "nesting deeper than 500 levels");
  EXPECT_EQ(scan.error->offset, kMaxJsonDepth);
  // A million brackets: an error, not a stack overflow.
  EXPECT_TRUE(scanJsonStream(std::string(1'000'000, '[')).error);
}

}  // namespace
}  // namespace kdesched::api
