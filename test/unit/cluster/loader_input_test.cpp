// Snapshot inputs that are easy to read wrong without a word: every document of a concatenated
// stream is read; two copies of one pod, a `/` in a name or namespace (two objects would share one
// key) and broken JSON in a field the decoder skips are refused; each error says what is wrong and
// where.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "pkg/cluster/loader.h"
#include "pkg/cluster/store.h"

namespace kdesched::cluster {
namespace {

using ::testing::HasSubstr;
using namespace std::string_literals;

std::string node(const std::string& name) {
  return R"({"kind":"Node","metadata":{"name":")" + name + R"("},"status":{"allocatable":{"cpu":"4","pods":"110"}}})";
}
std::string pod(const std::string& ns, const std::string& name) {
  return R"({"kind":"Pod","metadata":{"namespace":")" + ns + R"(","name":")" + name +
         R"("},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}})";
}
std::string list(const std::string& items) { return R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}"; }

Result<LoadReport> load(const std::string& text, Store& s) { return loadSnapshot(text, "snap.json", s); }

TEST(LoaderInput, EveryDocumentOfAJsonStreamIsRead) {
  Store s;
  // cat nodes.json pods.json > snap.json: the pods were dropped without a word.
  auto r = load(list(node("n1")) + "\n" + list(pod("d", "a")) + pod("d", "b"), s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(s.count(api::Kind::Node), 1u);
  EXPECT_EQ(s.count(api::Kind::Pod), 2u);
  EXPECT_EQ(r->loaded.at("Pod"), 2u);
}

TEST(LoaderInput, ErrorsInALaterDocumentNameIt) {
  Store s;
  auto r = load(list(node("n1")) + list(pod("d", "B")), s);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.error(), HasSubstr("snap.json: document[1].items[0] (Pod d/B): metadata.name: \"B\": a lowercase"));
}

TEST(LoaderInput, UnicodeByteOrderMarkIsSkipped) {
  Store s;
  auto r = load("\xEF\xBB\xBF" + list(node("n1")), s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(s.count(api::Kind::Node), 1u);
}

// ASCII text as UTF-16 with a byte order mark, little- or big-endian.
std::string utf16(const std::string& ascii, bool bigEndian) {
  std::string out = bigEndian ? "\xFE\xFF" : "\xFF\xFE";
  for (char c : ascii) out += bigEndian ? std::string{'\0', c} : std::string{c, '\0'};
  return out;
}

// PowerShell's `kubectl get ... > snap.json` writes UTF-16LE with a BOM.
TEST(LoaderInput, Utf16WithAByteOrderMarkIsReadAsUtf8) {
  for (bool bigEndian : {false, true}) {
    Store s;
    auto r = load(utf16(list(node("n1") + "," + pod("d", "a")), bigEndian), s);
    ASSERT_TRUE(r.isOk()) << r.error();
    EXPECT_EQ(s.count(api::Kind::Node), 1u);
    EXPECT_EQ(s.count(api::Kind::Pod), 1u);
    EXPECT_THAT(r->warnings, ::testing::Contains(HasSubstr("the file is UTF-16 text; read as")));
  }
  // An error in it is found in the text as read, with the file's name.
  Store s;
  auto r = load(utf16(list(pod("d", "B")), false), s);
  ASSERT_FALSE(r.isOk());
  EXPECT_THAT(r.error(), HasSubstr("snap.json: document.items[0] (Pod d/B): metadata.name"));
}

TEST(LoaderInput, YamlFlowStyleIsYaml) {
  Store s;
  auto r = loadSnapshot("{kind: List, items: [{kind: Node, metadata: {name: n1}}]}\n", "snap.yaml", s);
  ASSERT_TRUE(r.isOk()) << r.error();
  EXPECT_EQ(s.count(api::Kind::Node), 1u);
}

// yaml-cpp reads ~10 MB/s: past 16 MiB a JSON-looking text is not tried as YAML, its JSON error stands.
TEST(LoaderInput, LargeFlowStyleIsNotTriedAsYaml) {
  Store s;
  const std::string text = "{kind: List, items: []}" + std::string((16u << 20) + 1, ' ');
  auto r = loadSnapshot(text, "snap.json", s);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.error(),
            "snap.json: line 1, column 2: not valid JSON: expected a string in double quotes as the object key, found "
            "'kind'");
}

struct Bad {
  std::string name;
  std::string text;
  std::string error;  // the message after "snap.json: ", or for yaml-cpp's own words its start
  friend void PrintTo(const Bad& b, std::ostream* os) { *os << b.name; }
};

class LoaderInputBad : public ::testing::TestWithParam<Bad> {};

TEST_P(LoaderInputBad, IsAnErrorThatSaysWhatAndWhere) {
  Store s;
  auto r = load(GetParam().text, s);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.error().rfind("snap.json: ", 0), 0u) << r.error();
  EXPECT_THAT(r.error(), HasSubstr(GetParam().error));
  EXPECT_EQ(s.count(api::Kind::Pod) + s.count(api::Kind::Node), 0u);  // nothing half-loaded
}

INSTANTIATE_TEST_SUITE_P(
    Table, LoaderInputBad,
    ::testing::Values(
        Bad{"duplicate_pod", list(node("n1") + "," + pod("d", "a") + "," + pod("d", "a")),
            "document.items[2] (Pod d/a): the same object as document.items[1]; a snapshot holds each object once"},
        Bad{"duplicate_across_documents", list(node("n1")) + list(node("n1")),
            "document[1].items[0] (Node n1): the same object as document[0].items[0]; a snapshot holds each object "
            "once"},
        // "a" + "b/web" and "a/b" + "web" were one key: the second pod hid the first.
        Bad{"slash_in_name", list(node("n1") + "," + pod("a", "b/web")),
            "document.items[1] (Pod a/b/web): metadata.name: \"b/web\": a lowercase RFC 1123 subdomain must consist "
            "of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'example.com')"},
        Bad{"slash_in_namespace", list(node("n1") + "," + pod("a/b", "web")),
            "document.items[1] (Pod a/b/web): metadata.namespace: \"a/b\": a lowercase RFC 1123 label must consist "
            "of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character "
            "(e.g. 'my-name', or '123-abc')"},
        Bad{"pod_without_namespace", list(R"({"kind":"Pod","metadata":{"name":"web"},"spec":{"nodeName":"n1"}})"),
            "document.items[0] (Pod web): metadata.namespace: missing; this kind is namespaced"},
        Bad{"negative_allocatable",
            list(R"({"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"-4"}}})"),
            "document.items[0] (Node n1): status.allocatable.cpu: must be greater than or equal to 0, got a "
            "negative quantity for cpu"},
        Bad{"negative_request",
            list(R"({"kind":"Pod","metadata":{"namespace":"d","name":"p"},"spec":{"containers":[{"name":"c",)"
                 R"("resources":{"requests":{"cpu":"-3"}}}]}})"),
            "document.items[0] (Pod d/p): spec.containers[0].resources.requests.cpu: must be greater than or "
            "equal to 0, got a negative quantity for cpu"},
        // The decoder skips "x"; the broken value inside it passed.
        Bad{"broken_json_in_a_skipped_field", "{\"kind\":\"List\",\n\"x\":{\"a\" 1},\"items\":[]}",
            "line 2, column 10: not valid JSON: expected ':' after the object key, found '1'"},
        Bad{"truncated_json", "{\"kind\":\"List\",\"items\":[\n{\"kind\":\"Pod\"",
            "line 2, column 14: not valid JSON: expected ',' or '}' after an object member, found the end of the "
            "file"},
        Bad{"invalid_utf8_in_json", "{\"kind\":\"List\",\"items\":[],\"x\":\"\xFF\"}",
            "line 1, column 32: not valid JSON: text that is not UTF-8 (byte 0xff): the file must be UTF-8"},
        Bad{"invalid_utf8_in_yaml", "kind: List\n# caf\xE9\nitems: []\n",
            "line 2, column 6: text that is not UTF-8: the file must be UTF-8"},
        Bad{"broken_flow_style", "{kind: List, items: [}\n",
            "line 1, column 2: not valid JSON: expected a string in double quotes as the object key, found 'kind' "
            "(nor YAML: invalid YAML at line 1"},
        Bad{"deep_json", std::string(600, '[') + "\n",
            "line 1, column 501: not valid JSON: nesting deeper than 500 levels"},
        // yaml-cpp's own message for this was "bad file".
        Bad{"deep_yaml", "items: " + std::string(600, '[') + "\n", ": nesting deeper than 500 levels"},
        // An unpaired surrogate: not UTF-16 either.
        Bad{"utf16_unpaired_surrogate", "\xFF\xFE\0\xD8{\0"s,
            "the file is UTF-16 text: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8 FILE; in PowerShell, "
            "Out-File -Encoding utf8)"},
        Bad{"nul", "kind: List\nitems: [\0]"s,
            "binary data (a NUL byte at line 2, column 9): expected the JSON or YAML text that kubectl get -o "
            "json|yaml writes"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kdesched::cluster
