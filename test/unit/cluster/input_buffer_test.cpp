// The snapshot file reader: a file read whole with simdjson's padding, bounded for pipes and
// devices that never end, and given back a megabyte at a time as the loader decodes it.
#include "pkg/cluster/input_buffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "pkg/cluster/loader.h"

namespace kdesched::cluster {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class InputBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("input_buffer_test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(InputBufferTest, AnEmptyFileIsEmptyText) {
  auto b = InputBuffer::readFile(write("empty.json", ""), 100);
  ASSERT_TRUE(b.isOk()) << b.error();
  EXPECT_EQ(b->text(), "");
  EXPECT_GE(b->capacity(), simdjson::SIMDJSON_PADDING);
}

TEST_F(InputBufferTest, AFileExactlyAtTheLimitIsReadWithItsPadding) {
  const std::string content(4096, 'x');  // a whole page: the padding needs a page more
  auto b = InputBuffer::readFile(write("limit.json", content), content.size());
  ASSERT_TRUE(b.isOk()) << b.error();
  EXPECT_EQ(b->text(), content);
  EXPECT_GE(b->capacity(), content.size() + simdjson::SIMDJSON_PADDING);
}

TEST_F(InputBufferTest, AFileOneByteOverTheLimitIsRefused) {
  auto b = InputBuffer::readFile(write("over.json", std::string(4097, 'x')), 4096);
  ASSERT_FALSE(b.isOk());
  EXPECT_THAT(b.error(), HasSubstr("over.json: larger than 4096 bytes; raise --max-snapshot-bytes"));
}

TEST_F(InputBufferTest, ADirectoryOrAMissingFileIsNamed) {
  auto d = InputBuffer::readFile(dir_.string(), 100);
  ASSERT_FALSE(d.isOk());
  EXPECT_THAT(d.error(), HasSubstr(dir_.string() + ": is a directory; --snapshot takes a file"));
  auto m = InputBuffer::readFile((dir_ / "missing.json").string(), 100);
  ASSERT_FALSE(m.isOk());
  EXPECT_THAT(m.error(), HasSubstr("missing.json: cannot open the snapshot file: No such file or directory"));
}

// Binary data is refused at its first bytes, not after reading up to the limit: /dev/zero under
// the default 1 GiB limit took seconds and a gigabyte of memory to fail.
TEST_F(InputBufferTest, AnEndlessDeviceOfBinaryDataIsRefusedAtItsFirstByte) {
  auto b = InputBuffer::readFile("/dev/zero", kDefaultMaxSnapshotBytes);
  ASSERT_FALSE(b.isOk());
  EXPECT_EQ(b.error(),
            "/dev/zero: binary data (a NUL byte at line 1, column 1): expected the JSON or YAML text that kubectl "
            "get -o json|yaml writes");
}

// Random bytes, with NUL bytes and without: the first control byte (which neither JSON nor YAML
// allows) names the file as binary, though there is no NUL.
TEST_F(InputBufferTest, AFileOfRandomBytesIsRefusedAsBinaryData) {
  std::mt19937 random(33);
  std::string bytes(std::size_t{4} << 20, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  auto any = InputBuffer::readFile(write("random.bin", bytes), kDefaultMaxSnapshotBytes);
  ASSERT_FALSE(any.isOk());
  EXPECT_THAT(any.error(), HasSubstr("random.bin: binary data (a "));
  EXPECT_THAT(any.error(), HasSubstr("): expected the JSON or YAML text"));

  for (char& c : bytes) c = static_cast<char>(1 + random() % 255);
  bytes[0] = '\x8B';
  bytes[1] = '\x1F';
  auto noNul = InputBuffer::readFile(write("random-no-nul.bin", bytes), kDefaultMaxSnapshotBytes);
  ASSERT_FALSE(noNul.isOk());
  EXPECT_THAT(noNul.error(), HasSubstr("random-no-nul.bin: binary data (a control byte 0x1F at line 1, column 2)"));
}

// What the first bytes cannot rule out is read whole: control characters past them (the loader's
// parsers judge those), and UTF-16 with a byte order mark (the loader converts it).
TEST_F(InputBufferTest, TextAndUtf16WithABomAreReadWhole) {
  const std::string yaml = "# a snapshot\r\nkind: List\n\titems: []\n" + std::string(600, ' ') + "\x01";
  auto text = InputBuffer::readFile(write("late-control.yaml", yaml), kDefaultMaxSnapshotBytes);
  ASSERT_TRUE(text.isOk()) << text.error();
  EXPECT_EQ(text->text(), yaml);
  using namespace std::string_literals;
  const std::string utf16 = "\xFF\xFE{\0}\0"s;
  auto wide = InputBuffer::readFile(write("utf16.json", utf16), kDefaultMaxSnapshotBytes);
  ASSERT_TRUE(wide.isOk()) << wide.error();
  EXPECT_EQ(wide->text(), utf16);
}

// A pipe's size is not known: the buffer grows (1 MiB, then doubling) while it is read.
void writeToPipe(int fd, std::size_t bytes) {
  const std::string chunk(4096, 'p');
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, chunk.data(), std::min(chunk.size(), bytes - done));
    if (n <= 0) break;  // the reader stopped at its limit and closed the pipe
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

TEST_F(InputBufferTest, APipeIsReadWholeWhileItGrows) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer(writeToPipe, fds[1], std::size_t{3} << 20);
  auto b = InputBuffer::readFile("/dev/fd/" + std::to_string(fds[0]), std::size_t{8} << 20);
  writer.join();
  ::close(fds[0]);
  ASSERT_TRUE(b.isOk()) << b.error();
  EXPECT_EQ(b->text(), std::string(std::size_t{3} << 20, 'p'));
  EXPECT_GE(b->capacity(), b->text().size() + simdjson::SIMDJSON_PADDING);
}

TEST_F(InputBufferTest, AnEndlessPipeStopsAtTheLimit) {
  std::signal(SIGPIPE, SIG_IGN);  // the writer learns of the closed pipe from write's EPIPE
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer(writeToPipe, fds[1], std::size_t{64} << 20);
  auto b = InputBuffer::readFile("/dev/fd/" + std::to_string(fds[0]), std::size_t{2} << 20);
  ::close(fds[0]);
  writer.join();
  ASSERT_FALSE(b.isOk());
  EXPECT_THAT(b.error(), HasSubstr("larger than 2097152 bytes"));
}

TEST_F(InputBufferTest, ReleasesWholePagesAMegabyteAtATime) {
  const std::size_t mib = std::size_t{1} << 20;
  auto b = InputBuffer::readFile(write("big.json", std::string(3 * mib, 'b')), 4 * mib);
  ASSERT_TRUE(b.isOk()) << b.error();
  const char* data = b->text().data();
  b->releaseBefore(data + mib / 2);
  EXPECT_EQ(b->released(), 0u);  // less than a megabyte: not worth a system call
  b->releaseBefore(data + mib + mib / 2 + 100);
  EXPECT_EQ(b->released(), mib + mib / 2);  // whole pages only: the page holding byte 100 stays
  EXPECT_EQ(b->text()[mib + mib / 2], 'b');
  b->releaseBefore(data + mib);  // behind what was released: nothing
  EXPECT_EQ(b->released(), mib + mib / 2);
  b->releaseBefore(data + 10 * mib);  // past the end: up to the end's page
  EXPECT_EQ(b->released(), 3 * mib);
  EXPECT_EQ(b->text().size(), 3 * mib);
}

}  // namespace
}  // namespace kdesched::cluster
