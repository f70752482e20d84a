// The policy loader on hostile and real inputs: random bytes, yaml-cpp's traps, nesting, files
// (size limits, names in errors), and every example policy in the repository.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "pkg/policy/args.h"
#include "pkg/policy/policy.h"
#include "test/unit/testing/paths.h"

namespace kdesched::policy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Result<DeschedulerPolicy> parse(const std::string& yaml) { return parsePolicy(yaml, "policy.yaml"); }

std::string header() { return "apiVersion: \"descheduler/v1alpha2\"\nkind: \"DeschedulerPolicy\"\n"; }

std::string randomBytes(std::size_t size, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(size, '\0');
  for (char& c : s) c = static_cast<char>(gen() & 0xFF);
  return s;
}

std::string randomYamlish(std::size_t size, std::uint32_t seed) {
  static const std::string kAlphabet = "ab: -[]{}\n\"'#&*!|>%@`,?~01\t";
  std::mt19937 gen(seed);
  std::string s(size, ' ');
  for (char& c : s) c = kAlphabet[gen() % kAlphabet.size()];
  return s;
}

TEST(ParsePolicyRobustnessTest, TenMegabytesOfRandomBytesFailWithAShortMessage) {
  const std::string input = randomBytes(10u << 20, 20240611);
  Result<DeschedulerPolicy> r = parse(input);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.error(), StartsWith("policy.yaml: "));
  EXPECT_LT(r.error().size(), 400u) << r.error();
}

TEST(ParsePolicyRobustnessTest, RandomInputsNeverCrash) {
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    std::string input = seed % 2 ? randomBytes(4096, seed) : randomYamlish(4096, seed);
    Result<DeschedulerPolicy> r = parse(input);
    ASSERT_FALSE(r.isOk());
    // Errors must be printable whatever the input was.
    for (char c : r.error()) ASSERT_TRUE(c >= 0x20 && c < 0x7F) << r.error();
    // The same garbage after a valid header reaches the field readers.
    Result<DeschedulerPolicy> r2 = parse(header() + "profiles:\n  - name: p\n    pluginConfig: " + input);
    EXPECT_FALSE(r2.isOk());
  }
}

// yaml-cpp 0.7's LoadAll() loops forever, allocating, on a document starting with ","
// (jbeder/yaml-cpp#1040). Found by RandomInputsNeverCrash; each of these used to exhaust memory.
TEST(ParsePolicyRobustnessTest, YamlCppEndlessDocumentLoopIsAnError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {",", "policy.yaml: line 1, column 1: malformed YAML: unexpected \",\""},
      {", a", "policy.yaml: line 1, column 1: malformed YAML: unexpected \",\""},
      {"\n\n  ,\n", "policy.yaml: line 3, column 3: malformed YAML: unexpected \",\""},
      {"---\n,\n", "policy.yaml: line 2, column 1: malformed YAML: unexpected \",\""},
      {header() + "---\n,\n", "policy.yaml: line 4, column 1: malformed YAML: unexpected \",\""},
  };
  for (const auto& [yaml, error] : cases) {
    SCOPED_TRACE(yaml);
    Result<DeschedulerPolicy> r = parse(yaml);
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.error(), error);
  }
}

TEST(ParsePolicyRobustnessTest, DeepNestingAndCyclesAreRejected) {
  Result<DeschedulerPolicy> flow = parse(std::string(100000, '['));
  ASSERT_FALSE(flow.isOk());
  EXPECT_THAT(flow.error(), StartsWith("policy.yaml: line 1"));

  std::string block = header() + "profiles:\n";
  for (int i = 0; i < 5000; ++i) block += std::string(2 + 2 * static_cast<std::size_t>(i), ' ') + "- a:\n";
  EXPECT_FALSE(parse(block).isOk());

  // An alias that refers to itself builds a cyclic node: readers must not walk it forever.
  Result<DeschedulerPolicy> cyclic = parse(header() + "profiles: &p [*p]\n");
  ASSERT_FALSE(cyclic.isOk());
  EXPECT_EQ(cyclic.error(), "policy.yaml: profiles[0]: must be a mapping, got a list");
}

// ---------------------------------------------------------------------------------------------
// Files.

class PolicyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kdesched-policy-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(PolicyFileTest, LoadsAFile) {
  std::string path = write("policy.yaml", header() + "profiles:\n  - name: p\n");
  Result<DeschedulerPolicy> r = loadPolicyFile(path);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(r->sourceName, path);
  EXPECT_EQ(r->profiles.at(0).name, "p");
}

TEST_F(PolicyFileTest, ErrorsNameTheFile) {
  std::string path = write("bad.yaml", header() + "maxNoOfPodsToEvictPerNode: -1\n");
  EXPECT_EQ(loadPolicyFile(path).error(), path + ": maxNoOfPodsToEvictPerNode: must be a non-negative integer, got -1");
  std::string missing = (dir_ / "missing.yaml").string();
  EXPECT_EQ(loadPolicyFile(missing).error(), missing + ": cannot open the policy file: No such file or directory");
  EXPECT_EQ(loadPolicyFile(dir_.string()).error(), dir_.string() + ": is a directory, expected a policy file");
}

TEST_F(PolicyFileTest, RandomTenMegabyteFile) {
  std::string path = write("random.yaml", randomBytes(10u << 20, 7));
  Result<DeschedulerPolicy> r = loadPolicyFile(path);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.error(), StartsWith(path + ": "));
}

TEST_F(PolicyFileTest, OversizedFileIsRefusedBeforeParsing) {
  std::string path = write("huge.yaml", std::string((16u << 20) + 1, '#'));
  EXPECT_EQ(loadPolicyFile(path).error(), path + ": the policy file is larger than 16 MiB; is this the right file?");
}

// Every example under policies/ must load, and must be usable by upstream as is: every plugin
// enabled at an extension point needs a pluginConfig entry there (upstream refuses otherwise).
TEST(ExamplePoliciesTest, EveryFileParses) {
  std::filesystem::path dir = std::filesystem::path(kdesched::testing::sourceDir()) / "policies";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml" || entry.path().extension() == ".yml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    Result<DeschedulerPolicy> r = loadPolicyFile(file.string());
    ASSERT_TRUE(r.isOk()) << r.error();
    ASSERT_FALSE(r->profiles.empty());
    for (const Profile& p : r->profiles) {
      for (const PluginSet* set :
           {&p.plugins.deschedule, &p.plugins.balance, &p.plugins.filter, &p.plugins.preEvictionFilter}) {
        for (const std::string& plugin : set->enabled) {
          EXPECT_NE(p.findConfig(plugin), nullptr) << plugin << " is enabled without a pluginConfig entry";
        }
      }
    }
  }
}

TEST(ExamplePoliciesTest, DefaultPolicyEnablesTheImplementedStrategies) {
  Result<DeschedulerPolicy> r = loadPolicyFile(std::string(kdesched::testing::sourceDir()) + "/policies/default.yaml");
  ASSERT_TRUE(r.isOk()) << r.error();
  ASSERT_EQ(r->profiles.size(), 1u);
  const Profile& p = r->profiles[0];
  EXPECT_THAT(p.plugins.deschedule.enabled,
              ElementsAre("RemovePodsViolatingNodeAffinity", "RemovePodsViolatingInterPodAntiAffinity"));
  EXPECT_THAT(p.plugins.balance.enabled,
              ElementsAre("RemovePodsViolatingTopologySpreadConstraint", "LowNodeUtilization"));
  ASSERT_NE(p.findConfig("DefaultEvictor"), nullptr);
  ArgsReader evictor(p.findConfig("DefaultEvictor")->args);
  std::vector<std::string> disabled, extra;
  ASSERT_TRUE(evictor
                  .readObject("podProtections",
                              [&](ArgsReader& pp) {
                                std::optional<std::vector<std::string>> d, e;
                                if (Status s = pp.readStringList("defaultDisabled", d); !s) return s;
                                if (Status s = pp.readStringList("extraEnabled", e); !s) return s;
                                disabled = d.value_or(disabled);
                                extra = e.value_or(extra);
                                return Status::ok();
                              })
                  .isOk());
  EXPECT_THAT(disabled, ElementsAre("PodsWithLocalStorage"));
  EXPECT_THAT(extra, ElementsAre("PodsWithPVC"));
}

}  // namespace
}  // namespace kdesched::policy

namespace kdesched::policy {
namespace {

// A NUL byte came out as yaml-cpp's "unknown escape character: ?", UTF-16 text likewise: the
// encoding is named before yaml-cpp reads anything.
TEST(ParsePolicyRobustnessTest, TheWrongEncodingIsNamed) {
  using namespace std::string_literals;
  Result<DeschedulerPolicy> nul = parsePolicy(header() + "profiles: \"a\0b\"\n"s, "policy.yaml");
  ASSERT_FALSE(nul.isOk());
  EXPECT_EQ(nul.error(),
            "policy.yaml: binary data (a NUL byte at line 3, column 13): expected a DeschedulerPolicy in YAML");
  // UTF-16 with a byte order mark is read as upstream reads it (test/unit/policy/strictness_test.cpp);
  // without one, upstream's parser stops at the NUL bytes too.
  std::string utf16;
  for (char c : header()) utf16 += std::string{c, '\0'};
  Result<DeschedulerPolicy> wide = parsePolicy(utf16, "policy.yaml");
  ASSERT_FALSE(wide.isOk());
  EXPECT_THAT(wide.error(), StartsWith("policy.yaml: the file is UTF-16 text: convert it to UTF-8"));
  Result<DeschedulerPolicy> bom = parsePolicy("\xEF\xBB\xBF" + header(), "policy.yaml");
  EXPECT_TRUE(bom.isOk()) << bom.error();
}

}  // namespace
}  // namespace kdesched::policy
