#include "pkg/api/detail/intern_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace kdesched::api::detail {
namespace {

using Pool = InternPool<std::string>;

TEST(InternPoolTest, EqualValuesShareOneBlock) {
  Pool pool;
  auto a = pool.intern("app=web", 7);
  auto b = pool.intern("app=web", 7);
  auto c = pool.intern("app=db", 8);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(*c, "app=db");
}

TEST(InternPoolTest, DifferentValuesWithOneHashAreBothKept) {
  Pool pool;
  auto a = pool.intern("first", 42);
  auto b = pool.intern("second", 42);
  auto c = pool.intern("third", 42);
  EXPECT_EQ(*a, "first");
  EXPECT_EQ(*b, "second");
  EXPECT_EQ(*c, "third");
  EXPECT_EQ(pool.intern("second", 42).get(), b.get());
  EXPECT_EQ(pool.intern("third", 42).get(), c.get());
  EXPECT_EQ(pool.intern("first", 42).get(), a.get());
}

// A pod deleted and created again (the same labels, owner, requests) frees its blocks and interns
// them anew: the freed slot is taken again, so the table does not fill with dead entries.
TEST(InternPoolTest, AFreedBlockIsFreedAndItsSlotReused) {
  Pool pool;
  std::weak_ptr<const std::string> first = pool.intern("again", 99);
  EXPECT_TRUE(first.expired());  // nobody holds it: the pool does not keep it alive
  for (int i = 0; i < 10000; ++i) pool.intern("again", 99);
  EXPECT_EQ(pool.slotsInUse(), 1u);
}

// Hashes made of aligned pointers repeat their low bits; they must still spread over the table.
TEST(InternPoolTest, AlignedHashesStayFindable) {
  Pool pool;
  std::vector<std::shared_ptr<const std::string>> held;
  for (std::size_t i = 0; i < 5000; ++i) held.push_back(pool.intern("v" + std::to_string(i), i * 4096));
  for (std::size_t i = 0; i < 5000; ++i) ASSERT_EQ(pool.intern("v" + std::to_string(i), i * 4096).get(), held[i].get());
  EXPECT_EQ(pool.slotsInUse(), 5000u);
}

// Values that come and go (fresh label values) do not grow the table: rebuilding drops the slots
// of freed blocks once half of it is in use.
TEST(InternPoolTest, ChurnOfFreshValuesKeepsTheTableBounded) {
  Pool pool;
  std::vector<std::pair<std::size_t, std::shared_ptr<const std::string>>> live;
  for (std::size_t i = 0; i < 100000; ++i) {
    const std::size_t hash = i * 0x9e3779b97f4a7c15ULL;
    live.emplace_back(hash, pool.intern("fresh-" + std::to_string(i), hash));
    if (live.size() > 100) live.erase(live.begin());
  }
  EXPECT_LE(pool.slotsInUse(), 16u * 64u / 2);  // at most half of each shard's smallest table
  for (const auto& [hash, p] : live) EXPECT_EQ(pool.intern(std::string(*p), hash).get(), p.get());
}

TEST(InternPoolTest, ConcurrentInternsOfOneValueGetOneBlock) {
  Pool pool;
  std::vector<std::shared_ptr<const std::string>> got(4);
  std::shared_ptr<const std::string> keep = pool.intern("shared", 5);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) pool.intern("other-" + std::to_string(t * 1000 + i), static_cast<std::size_t>(i));
      got[t] = pool.intern("shared", 5);
    });
  for (auto& th : threads) th.join();
  for (const auto& g : got) EXPECT_EQ(g.get(), keep.get());
}

}  // namespace
}  // namespace kdesched::api::detail
