// A list is decoded one item at a time, in place in the text: the item that ends the text is read
// with the padding simdjson needs, and a file's text is given back as it is decoded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "pkg/cluster/loader.h"
#include "pkg/cluster/store.h"

namespace kdesched::cluster {
namespace {

namespace fs = std::filesystem;

// Items of a PodList may leave out their kind; those of a bare array may not.
std::string pod(std::size_t i, bool kind = false) {
  return std::string(kind ? R"({"kind":"Pod",)" : "{") + R"("metadata":{"namespace":"d","name":"p)" +
         std::to_string(i) + R"("},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}})";
}
std::string podList(std::size_t n) {
  std::string items;
  for (std::size_t i = 0; i < n; ++i) items += (i ? "," : "") + pod(i);
  return R"({"kind":"PodList","items":[)" + items + "]}";
}

// The text ends where an unreadable page starts: reading a byte past it is a segfault.
TEST(LoaderItems, TheLastItemOfUnpaddedTextIsReadWithItsOwnPadding) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* map = ::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(::mprotect(static_cast<char*>(map) + page, page, PROT_NONE), 0);
  for (const std::string& text : {podList(3), "[" + pod(0, true) + "," + pod(1, true) + "]"}) {
    ASSERT_LT(text.size(), page);
    char* at = static_cast<char*>(map) + page - text.size();
    std::memcpy(at, text.data(), text.size());
    Store s;
    auto r = loadSnapshot(std::string_view(at, text.size()), "snap.json", s);
    ASSERT_TRUE(r.isOk()) << r.error();
    EXPECT_EQ(s.count(api::Kind::Pod), text[0] == '[' ? 2u : 3u);
  }
  ::munmap(map, 2 * page);
}

TEST(LoaderItems, AFileOfSeveralMegabytesIsLoadedWhole) {
  const fs::path path = fs::temp_directory_path() / ("loader_items_test-" + std::to_string(::getpid()) + ".json");
  const std::string text = podList(30000);  // ~3 MB: the text is given back while it is decoded
  ASSERT_GT(text.size(), std::size_t{2} << 20);
  std::ofstream(path, std::ios::binary) << text;
  Store s;
  auto r = loadSnapshotFile(path.string(), s, text.size());  // exactly at the limit
  fs::remove(path);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(s.count(api::Kind::Pod), 30000u);
  EXPECT_EQ(r->loaded.at("Pod"), 30000u);
  EXPECT_EQ(r->bytes, text.size());
}

TEST(LoaderItems, AnItemsErrorNamesTheItem) {
  Store s;
  auto r = loadSnapshot(R"({"kind":"PodList","items":[)" + pod(0) + R"(,7]})", "snap.json", s);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.error(), ::testing::HasSubstr("document.items[1]: must be an object"));
  EXPECT_EQ(s.count(api::Kind::Pod), 0u);  // nothing half-loaded
}

}  // namespace
}  // namespace kdesched::cluster
