// Names as the API server validates them: a `/` in a name made two pods share a key.
#include "pkg/api/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kdesched::api {
namespace {

TEST(Names, DnsSubdomain) {
  for (const std::string& ok :
       std::vector<std::string>{"a", "web-1", "node1.example.com", "0abc", std::string(253, 'a')})
    EXPECT_TRUE(validateDnsSubdomain(ok).isOk()) << ok;
  for (const std::string& bad :
       std::vector<std::string>{"", "b/web", "Web", "a_b", "-a", "a-", "a..b", "a.", ".a", "a.-b", "\xC3\xA9"})
    EXPECT_FALSE(validateDnsSubdomain(bad).isOk()) << bad;
  EXPECT_EQ(validateDnsSubdomain(std::string(254, 'a')).message(), "must be no more than 253 characters");
}

TEST(Names, DnsLabel) {
  for (const std::string& ok : std::vector<std::string>{"default", "kube-system", "a1", std::string(63, 'a')})
    EXPECT_TRUE(validateDnsLabel(ok).isOk()) << ok;
  for (const std::string& bad : std::vector<std::string>{"", "a/b", "a.b", "A", "-a", "a-", std::string(64, 'a')})
    EXPECT_FALSE(validateDnsLabel(bad).isOk()) << bad;
}

TEST(Names, ObjectNamesByKind) {
  Pod pod;
  pod.name = "web";
  EXPECT_EQ(validateObjectNames(pod).message(), "metadata.namespace: missing; this kind is namespaced");
  pod.ns = Symbol("a/b");
  EXPECT_EQ(validateObjectNames(pod).message().rfind("metadata.namespace: \"a/b\": a lowercase RFC 1123 label", 0), 0u)
      << validateObjectNames(pod).message();
  pod.ns = Symbol("a");
  pod.name = "b/web";
  EXPECT_EQ(validateObjectNames(pod).message().rfind("metadata.name: \"b/web\": a lowercase RFC 1123 subdomain", 0), 0u)
      << validateObjectNames(pod).message();
  pod.name = "web.v1";
  EXPECT_TRUE(validateObjectNames(pod).isOk());

  Namespace ns;
  ns.name = "a.b";  // a subdomain, but namespaces are labels
  EXPECT_FALSE(validateObjectNames(ns).isOk());
  Node node;
  node.name = "node-1.zone-a";
  EXPECT_TRUE(validateObjectNames(node).isOk());
  node.name = "Node_1";
  EXPECT_FALSE(validateObjectNames(node).isOk());
}

}  // namespace
}  // namespace kdesched::api
