#include "pkg/api/uid.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_set>

#include "pkg/api/types.h"

namespace kdesched::api {
namespace {

static_assert(sizeof(Uid) <= 24, "a UID costs at most 24 bytes in a cached pod");

TEST(UidTest, EveryTextComesBackAsItWasRead) {
  for (const char* text : {
           "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33",  // the API server's form: kept as 16 bytes
           "ffffffff-ffff-ffff-ffff-ffffffffffff",
           "00000000-0000-0000-0000-000000000001",
           "00000000-0000-0000-0000-000000000000",   // all zeros: kept as text (bytes zero mean empty)
           "0F7E4A52-3C2B-4A8E-9D61-7B5E2C1A0F33",   // uppercase: text
           "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f3",    // one short
           "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f333",  // one long
           "0f7e4a52x3c2b-4a8e-9d61-7b5e2c1a0f33",   // a hyphen missing
           "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0fg3",   // not hex
           "uid-default-payment-0",
           "u",
       }) {
    Uid u(text);
    EXPECT_EQ(u.str(), text);
    EXPECT_FALSE(u.empty()) << text;
    Uid copy = u;
    EXPECT_EQ(copy, u) << text;
    EXPECT_EQ(copy.str(), text);
    EXPECT_EQ(copy.hash(), u.hash()) << text;
  }
}

TEST(UidTest, EmptyAndClear) {
  Uid none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.str(), "");
  EXPECT_EQ(none, Uid(""));
  Uid u("0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33");
  u.clear();
  EXPECT_TRUE(u.empty());
  EXPECT_EQ(u, none);
}

TEST(UidTest, EqualityIsTheTexts) {
  // Upstream compares UIDs as strings: an uppercase spelling is another UID.
  const Uid lower("0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33");
  EXPECT_NE(lower, Uid("0F7E4A52-3C2B-4A8E-9D61-7B5E2C1A0F33"));
  EXPECT_NE(lower, Uid("0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f34"));
  EXPECT_NE(Uid("00000000-0000-0000-0000-000000000000"), Uid());
  EXPECT_EQ(lower, Uid(std::string("0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33")));
  std::unordered_set<Uid> set{lower, Uid("uid-1"), Uid("0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f34")};
  EXPECT_EQ(set.size(), 3U);
  EXPECT_TRUE(set.contains(Uid("0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33")));
  EXPECT_TRUE(set.contains(Uid("uid-1")));
  EXPECT_FALSE(set.contains(Uid("uid-2")));
}

TEST(UidTest, AssignmentCopiesText) {
  Uid a("uid-a");
  Uid b("0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33");
  b = a;
  a = Uid("uid-changed");
  EXPECT_EQ(b.str(), "uid-a");
  a = a;  // NOLINT(clang-diagnostic-self-assign-overloaded): self-assignment keeps the value
  EXPECT_EQ(a.str(), "uid-changed");
}

// Owner references and label sets are shared between equal copies (the pods of one ReplicaSet);
// changing one copy leaves the others as they were.
TEST(SharedBlocksTest, EqualOwnerListsShareOneCopy) {
  const OwnerReference rs{Symbol("apps/v1"), Symbol("ReplicaSet"), Symbol("web-1"), "u2", true};
  OwnerRefs a{rs};
  OwnerRefs b(std::vector<OwnerReference>{rs});
  EXPECT_EQ(&a.front(), &b.front());
  OwnerRefs c = b;
  c.push_back({Symbol("v1"), Symbol("ConfigMap"), Symbol("cm"), "u1", false});
  EXPECT_EQ(b.size(), 1U);
  EXPECT_EQ(c.size(), 2U);
  EXPECT_NE(b, c);
  c.clear();
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c, OwnerRefs());
}

TEST(SharedBlocksTest, EqualRequestListsShareOneCopy) {
  SharedResourceList a = ResourceList{{"cpu", 100}, {"memory", 512}};
  SharedResourceList b = ResourceList{{"memory", 512}, {"cpu", 100}};
  EXPECT_EQ(&a.list(), &b.list());
  EXPECT_EQ(a, (ResourceList{{"cpu", 100}, {"memory", 512}}));
  SharedResourceList c = b;
  c.set(kCpu(), 250);
  EXPECT_EQ(b.get(kCpu()), 100);
  EXPECT_EQ(c.get(kCpu()), 250);
  EXPECT_EQ(c.get(kMemory()), 512);
  EXPECT_NE(b, c);
  EXPECT_TRUE(SharedResourceList().empty());
  EXPECT_TRUE(SharedResourceList(ResourceList{}).empty());
  EXPECT_EQ(SharedResourceList(ResourceList{}), SharedResourceList());
  EXPECT_FALSE(SharedResourceList().has(kCpu()));
}

TEST(SharedBlocksTest, EqualLabelSetsShareOneCopy) {
  Labels a{{"app", "web"}, {"tier", "front"}};
  Labels b = Labels::fromUnsorted({{Symbol("tier"), Symbol("front")}, {Symbol("app"), Symbol("web")}});
  EXPECT_EQ(&*a.begin(), &*b.begin());
  Labels c = b;
  c.set("tier", "back");
  EXPECT_EQ(b.get("tier"), "front");
  EXPECT_EQ(c.get("tier"), "back");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_TRUE(Labels().empty());
  EXPECT_EQ(Labels::fromUnsorted({}), Labels());
}

}  // namespace
}  // namespace kdesched::api
