#include "pkg/base/utf8.h"

#include <gtest/gtest.h>

namespace kdesched::utf8 {
namespace {

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(valid(""));
  EXPECT_TRUE(valid("plain ascii"));
  EXPECT_TRUE(valid("\xC3\xA9\xE2\x9C\x93\xF0\x9F\x98\x80"));  // é ✓ 😀
}

TEST(Utf8, RejectsMalformedSequences) {
  EXPECT_FALSE(valid("\xFF"));
  EXPECT_FALSE(valid("\xC3"));              // cut short
  EXPECT_FALSE(valid("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(valid("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(valid("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(valid("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(valid("\xE2\x9C"));          // cut short
}

TEST(Utf8, SanitizeReplacesEachBadByte) {
  EXPECT_EQ(sanitize("a\xFF"
                     "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(sanitize("\xC3\xA9"), "\xC3\xA9");
  EXPECT_EQ(sanitize("\xE2\x9C"), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace kdesched::utf8
