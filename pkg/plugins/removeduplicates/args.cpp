#include "pkg/plugins/removeduplicates/args.h"

namespace kdesched::plugins::removeduplicates {

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  // readNamespaces gives upstream's only validation: include and exclude both set.
  KD_TRY(r.readNamespaces("namespaces", a.namespaces));
  std::optional<std::vector<std::string>> kinds;
  KD_TRY(r.readStringList("excludeOwnerKinds", kinds));
  a.excludeOwnerKinds = kinds.value_or(std::vector<std::string>{});
  KD_TRY(r.finish());
  return a;
}

}  // namespace kdesched::plugins::removeduplicates
