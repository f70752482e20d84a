// Interned strings live while a Symbol holds them: label values that churn (pod-template-hash,
// controller-uid, a counter) must not grow a daemon's table for ever. The table keeps entries no
// Symbol holds until it has doubled since its last sweep, so these tests churn past that point.
#include "pkg/api/symbol.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace kdesched::api {
namespace {

// Enough new strings to cross the sweep point however many the other tests of this binary hold.
std::size_t churnPastASweep(const std::string& prefix) {
  const std::size_t n = 2 * Symbol::tableSize() + 8192;
  for (std::size_t i = 0; i < n; ++i) Symbol s(prefix + std::to_string(i));
  return n;
}

TEST(Symbol, EqualStringsShareOneHandleAndTheEmptyStringIsTheNullHandle) {
  Symbol a("app"), b(std::string("ap") + "p");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_NE(a, Symbol("web"));
  EXPECT_EQ(Symbol(""), Symbol());
  EXPECT_TRUE(Symbol("").empty());
  EXPECT_EQ(Symbol().str(), "");
  EXPECT_LT(Symbol("a"), Symbol("b"));
  EXPECT_FALSE(Symbol("b") < Symbol("a"));
}

TEST(Symbol, CopiesAndMovesKeepTheStringAndAMovedFromSymbolIsEmpty) {
  Symbol a("copied-and-moved");
  Symbol copy = a;
  Symbol moved = std::move(copy);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): the state a move leaves is part of the contract
  Symbol assigned;
  assigned = moved;
  assigned = assigned;  // self-assignment keeps it
  EXPECT_EQ(assigned.view(), "copied-and-moved");
  EXPECT_EQ(moved, a);
}

TEST(Symbol, StringsNoSymbolHoldsAreSweptSoChurnDoesNotGrowTheTable) {
  churnPastASweep("warm-");
  const std::size_t before = Symbol::tableSize();
  const std::size_t made = churnPastASweep("churn-");
  const std::size_t after = Symbol::tableSize();
  EXPECT_LT(after, made / 2) << "dropped strings must be swept";
  EXPECT_LE(after, 2 * before + 4096) << "the table stays within twice its live strings plus the floor";
}

TEST(Symbol, AHeldStringSurvivesASweepAndKeepsItsHandle) {
  Symbol held("held-through-sweeps");
  const std::string_view text = held.view();
  churnPastASweep("sweep-");
  churnPastASweep("sweep-again-");
  EXPECT_EQ(held.view(), "held-through-sweeps");
  EXPECT_EQ(held.view().data(), text.data()) << "the entry never moved";
  EXPECT_EQ(Symbol("held-through-sweeps"), held) << "interning again finds the held entry";
}

TEST(Symbol, ThreadsInterningCopyingAndDroppingTheSameStringsWhileTheTableSweeps) {
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &mismatches] {
      std::vector<Symbol> kept;
      for (int i = 0; i < 20000; ++i) {
        Symbol shared("shared-" + std::to_string(i % 64));  // the same few strings in every thread
        Symbol copy = shared;
        if (copy.view() != "shared-" + std::to_string(i % 64)) ++mismatches[t];
        Symbol(std::to_string(t) + "-unique-" + std::to_string(i));  // garbage that sweeps erase
        if (i % 1000 == 0) kept.push_back(copy);
      }
      for (std::size_t k = 0; k < kept.size(); ++k)
        if (kept[k].view() != "shared-" + std::to_string((k * 1000) % 64)) ++mismatches[t];
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace kdesched::api
