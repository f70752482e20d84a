#include "pkg/api/names.h"

#include <string>
#include <type_traits>

namespace kdesched::api {
namespace {

bool isAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool isLabel(std::string_view s) {
  if (s.empty() || !isAlnum(s.front()) || !isAlnum(s.back())) return false;
  for (char c : s)
    if (!isAlnum(c) && c != '-') return false;
  return true;
}

Status field(std::string_view path, std::string_view value, const Status& st) {
  if (st.isOk()) return st;
  return Status::error(std::string(path) + ": \"" + std::string(value.substr(0, 300)) + "\": " + st.message());
}

}  // namespace

Status validateDnsSubdomain(std::string_view name) {
  if (name.size() > 253) return Status::error("must be no more than 253 characters");
  bool ok = !name.empty();
  for (std::size_t start = 0; ok && start <= name.size();) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    ok = isLabel(name.substr(start, dot - start));
    start = dot + 1;
  }
  if (ok) return Status::ok();
  return Status::error(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
      "start and end with an alphanumeric character (e.g. 'example.com')");
}

Status validateDnsLabel(std::string_view name) {
  if (name.size() > 63) return Status::error("must be no more than 63 characters");
  if (isLabel(name)) return Status::ok();
  return Status::error(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
      "end with an alphanumeric character (e.g. 'my-name', or '123-abc')");
}

Status validateObjectNames(const Object& object) {
  return std::visit(
      [](const auto& o) -> Status {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, Namespace>) {
          return field("metadata.name", o.name, validateDnsLabel(o.name));
        } else {
          if constexpr (requires { o.ns; }) {
            if (o.ns.view().empty()) return Status::error("metadata.namespace: missing; this kind is namespaced");
            KD_TRY(field("metadata.namespace", o.ns.view(), validateDnsLabel(o.ns.view())));
          }
          return field("metadata.name", o.name, validateDnsSubdomain(o.name));
        }
      },
      object);
}

}  // namespace kdesched::api
