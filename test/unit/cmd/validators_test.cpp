#include "cmd/kdesched/validators.h"

#include <gtest/gtest.h>

namespace kdesched::cmd {
namespace {

std::string check(std::string value) { return nonNegative()(value); }

TEST(NonNegative, SaysWhatIsWrongInOneShortSentence) {
  EXPECT_EQ(check("0"), "");
  EXPECT_EQ(check("2.5"), "");
  EXPECT_EQ(check("-1"), "Value -1 must be zero or positive");
  EXPECT_EQ(check("x"), "Value x is not a number");
}

}  // namespace
}  // namespace kdesched::cmd
