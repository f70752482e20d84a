#include "pkg/api/text_input.h"

#include <gtest/gtest.h>

#include <string>

namespace kdesched::api {
namespace {

TEST(TextInput, PositionsAreOneBasedLineAndByteColumn) {
  EXPECT_EQ(textPosition("abc", 0), "line 1, column 1");
  EXPECT_EQ(textPosition("ab\ncd\nef", 7), "line 3, column 2");
  EXPECT_EQ(textPosition("ab\n", 3), "line 2, column 1");
  EXPECT_EQ(textPosition("ab", 99), "line 1, column 3");  // past the end: the end
}

TEST(TextInput, WrongEncodingsAreNamed) {
  using namespace std::string_literals;
  const std::string what = "YAML";
  EXPECT_EQ(checkTextEncoding("\xFF\xFE{\0\"\0"s, what).error().rfind("the file is UTF-16 text: convert it", 0), 0u);
  EXPECT_EQ(checkTextEncoding("{\0\"\0k\0"s, what).error().rfind("the file is UTF-16 text", 0), 0u);  // no BOM
  EXPECT_EQ(checkTextEncoding("\0{\0\"\0k"s, what).error().rfind("the file is UTF-16 text", 0), 0u);
  EXPECT_EQ(checkTextEncoding("\xFF\xFE\0\0{\0\0\0"s, what).error().rfind("the file is UTF-32 text", 0), 0u);
  EXPECT_EQ(checkTextEncoding("a: 1\nb: \0"s, what).error(),
            "binary data (a NUL byte at line 2, column 4): expected YAML");
  EXPECT_EQ(*checkTextEncoding("\xEF\xBB\xBF"
                               "a: 1",
                               what),
            "a: 1");
  EXPECT_EQ(*checkTextEncoding("", what), "");
}

TEST(TextInput, FirstInvalidUtf8) {
  EXPECT_FALSE(firstInvalidUtf8("plain \xC3\xA9t\xC3\xA9"));
  EXPECT_EQ(firstInvalidUtf8("ab\xC3\x28"), 2u);
  EXPECT_EQ(firstInvalidUtf8("ab\xFF"), 2u);
}

}  // namespace
}  // namespace kdesched::api
