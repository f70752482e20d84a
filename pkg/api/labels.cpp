#include "pkg/api/labels.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "pkg/api/detail/intern_pool.h"

namespace kdesched::api {

// ---------------------------------------------------------------------------------------------
// Labels

namespace {
auto findKey(const std::vector<Labels::Item>& items, std::string_view key) {
  return std::lower_bound(items.begin(), items.end(), key,
                          [](const Labels::Item& item, std::string_view k) { return item.first.view() < k; });
}
}  // namespace

Labels::Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> kv) {
  std::vector<Item> items;
  items.reserve(kv.size());
  for (const auto& [k, v] : kv) items.emplace_back(Symbol(k), Symbol(v));
  *this = fromUnsorted(std::move(items));
}

const std::vector<Labels::Item>& Labels::items() const {
  static const auto* none = new std::vector<Item>();  // never destroyed: labels may outlive statics
  return items_ ? *items_ : *none;
}

void Labels::assign(std::vector<Item> items) {
  if (items.empty()) {
    items_.reset();
    return;
  }
  static auto* pool = new detail::InternPool<std::vector<Item>>();  // never destroyed, as above
  detail::HashMix hash;
  for (const auto& [k, v] : items) {
    hash.add(k.hash());
    hash.add(v.hash());
  }
  items.shrink_to_fit();
  items_ = pool->intern(std::move(items), hash.value());
}

Labels Labels::fromUnsorted(std::vector<Item> items) {
  // Stable, so among equal keys the input order survives and the last one can be kept.
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.first.view() < b.first.view(); });
  std::vector<Item> unique;
  unique.reserve(items.size());
  for (auto& item : items) {
    if (!unique.empty() && unique.back().first == item.first) {
      unique.back().second = item.second;
    } else {
      unique.push_back(item);
    }
  }
  Labels out;
  out.assign(std::move(unique));
  return out;
}

std::optional<std::string_view> Labels::get(std::string_view key) const {
  const auto& items = this->items();
  auto it = findKey(items, key);
  if (it != items.end() && it->first.view() == key) return it->second.view();
  return std::nullopt;
}

void Labels::set(std::string_view key, std::string_view value) {
  std::vector<Item> items = this->items();
  auto it = findKey(items, key);
  if (it != items.end() && it->first.view() == key) {
    auto pos = items.begin() + (it - items.cbegin());
    pos->second = Symbol(value);
  } else {
    items.insert(it, {Symbol(key), Symbol(value)});
  }
  assign(std::move(items));
}

std::string Labels::toString() const {
  std::string out;
  for (const auto& [k, v] : items()) {
    if (!out.empty()) out += ',';
    out += k.view();
    out += '=';
    out += v.view();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Syntax checks (k8s.io/apimachinery/pkg/util/validation).

namespace {

bool isAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], the shape shared by label values and key names.
bool isQualifiedNamePart(std::string_view s) {
  if (s.empty() || !isAlnum(s.front()) || !isAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// RFC 1123 subdomain: dot-separated lowercase labels, each [a-z0-9]([-a-z0-9]*[a-z0-9])?.
bool isDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !isLowerAlnum(label.front()) || !isLowerAlnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [](char c) { return isLowerAlnum(c) || c == '-'; })) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Why `key` is not a valid label key, or empty when it is (validation.IsQualifiedName).
std::string labelKeyProblem(std::string_view key) {
  std::string_view name = key;
  const std::size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) return "a qualified name has at most one '/'";
    const std::string_view prefix = key.substr(0, slash);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (!isDns1123Subdomain(prefix)) return "prefix part must be a lowercase RFC 1123 subdomain";
    name = key.substr(slash + 1);
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  if (!isQualifiedNamePart(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
           "with an alphanumeric character";
  }
  return {};
}

std::string labelValueProblem(std::string_view value) {
  if (value.empty()) return {};
  if (value.size() > 63) return "must be no more than 63 characters";
  if (!isQualifiedNamePart(value)) {
    return "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
           "alphanumeric character";
  }
  return {};
}

}  // namespace

bool isValidLabelKey(std::string_view key) { return labelKeyProblem(key).empty(); }
bool isValidLabelValue(std::string_view value) { return labelValueProblem(value).empty(); }

std::optional<std::int64_t> parseLabelInt64(std::string_view value) {
  // from_chars rejects a leading '+', which strconv.ParseInt accepts.
  if (!value.empty() && value.front() == '+') {
    value.remove_prefix(1);
    if (!value.empty() && value.front() == '-') return std::nullopt;
  }
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) return std::nullopt;
  return v;
}

// ---------------------------------------------------------------------------------------------
// Selectors

namespace {

bool contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// labels.Requirement.Matches for one requirement.
bool requirementMatches(const LabelSelectorRequirement& r, const Labels& labels) {
  const std::optional<std::string_view> got = labels.get(r.key);
  switch (r.op) {
    case LabelSelectorOp::In: return got && contains(r.values, *got);
    case LabelSelectorOp::NotIn: return !got || !contains(r.values, *got);
    case LabelSelectorOp::Exists: return got.has_value();
    case LabelSelectorOp::DoesNotExist: return !got;
    case LabelSelectorOp::Gt:
    case LabelSelectorOp::Lt: {
      if (!got || r.values.size() != 1) return false;
      const auto have = parseLabelInt64(*got);
      const auto want = parseLabelInt64(r.values.front());
      if (!have || !want) return false;
      return r.op == LabelSelectorOp::Gt ? *have > *want : *have < *want;
    }
  }
  return false;
}

std::string_view opName(LabelSelectorOp op) {
  switch (op) {
    case LabelSelectorOp::In: return "In";
    case LabelSelectorOp::NotIn: return "NotIn";
    case LabelSelectorOp::Exists: return "Exists";
    case LabelSelectorOp::DoesNotExist: return "DoesNotExist";
    case LabelSelectorOp::Gt: return "Gt";
    case LabelSelectorOp::Lt: return "Lt";
  }
  return "?";
}

std::string joinSorted(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += values[i];
  }
  return out;
}

std::string requirementString(const LabelSelectorRequirement& r) {
  switch (r.op) {
    case LabelSelectorOp::In: return r.key + " in (" + joinSorted(r.values) + ")";
    case LabelSelectorOp::NotIn:
      // A single excluded value reads better, and parses back to the same requirement, as "!=".
      if (r.values.size() == 1) return r.key + "!=" + r.values.front();
      return r.key + " notin (" + joinSorted(r.values) + ")";
    case LabelSelectorOp::Exists: return r.key;
    case LabelSelectorOp::DoesNotExist: return "!" + r.key;
    case LabelSelectorOp::Gt: return r.key + ">" + joinSorted(r.values);
    case LabelSelectorOp::Lt: return r.key + "<" + joinSorted(r.values);
  }
  return r.key;
}

}  // namespace

bool LabelSelector::matches(const Labels& labels) const {
  for (const auto& [k, v] : matchLabels) {
    const auto got = labels.get(k);
    if (!got || *got != v) return false;
  }
  for (const auto& r : matchExpressions) {
    if (!requirementMatches(r, labels)) return false;
  }
  return true;
}

std::string LabelSelector::toString() const {
  // Sorted by key like labels.Selector.String(); stable so equal keys keep their order.
  std::vector<std::pair<std::string_view, std::string>> parts;
  parts.reserve(matchLabels.size() + matchExpressions.size());
  for (const auto& [k, v] : matchLabels) parts.emplace_back(k, k + "=" + v);
  for (const auto& r : matchExpressions) parts.emplace_back(r.key, requirementString(r));
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += ',';
    out += parts[i].second;
  }
  return out;
}

Status validateLabelSelector(const LabelSelector& s) {
  std::vector<std::string> problems;
  for (const auto& [k, v] : s.matchLabels) {
    if (auto p = labelKeyProblem(k); !p.empty())
      problems.push_back("matchLabels: invalid label key \"" + k + "\": " + p);
    if (auto p = labelValueProblem(v); !p.empty()) {
      problems.push_back("matchLabels[" + k + "]: invalid label value \"" + v + "\": " + p);
    }
  }
  for (std::size_t i = 0; i < s.matchExpressions.size(); ++i) {
    const auto& r = s.matchExpressions[i];
    const std::string at = "matchExpressions[" + std::to_string(i) + "]";
    switch (r.op) {
      case LabelSelectorOp::In:
      case LabelSelectorOp::NotIn:
        if (r.values.empty()) problems.push_back(at + ".values: must be specified when operator is In or NotIn");
        break;
      case LabelSelectorOp::Exists:
      case LabelSelectorOp::DoesNotExist:
        if (!r.values.empty()) {
          problems.push_back(at + ".values: may not be specified when operator is Exists or DoesNotExist");
        }
        break;
      case LabelSelectorOp::Gt:
      case LabelSelectorOp::Lt:
        problems.push_back(at + ".operator: \"" + std::string(opName(r.op)) + "\" is not a valid selector operator");
        break;
    }
    if (auto p = labelKeyProblem(r.key); !p.empty()) {
      problems.push_back(at + ".key: invalid label key \"" + r.key + "\": " + p);
    }
    for (std::size_t j = 0; j < r.values.size(); ++j) {
      if (auto p = labelValueProblem(r.values[j]); !p.empty()) {
        problems.push_back(at + ".values[" + std::to_string(j) + "]: invalid label value \"" + r.values[j] +
                           "\": " + p);
      }
    }
  }
  if (problems.empty()) return Status::ok();
  std::string msg = problems.front();
  for (std::size_t i = 1; i < problems.size(); ++i) msg += "; " + problems[i];
  return Status::error(std::move(msg));
}

Result<LabelSelectorOp> parseLabelSelectorOp(std::string_view op) {
  if (op == "In") return LabelSelectorOp::In;
  if (op == "NotIn") return LabelSelectorOp::NotIn;
  if (op == "Exists") return LabelSelectorOp::Exists;
  if (op == "DoesNotExist") return LabelSelectorOp::DoesNotExist;
  return Status::error("unknown operator \"" + std::string(op) + "\"");
}

// ---------------------------------------------------------------------------------------------
// Selector string syntax, following labels.Parse: a lexer that splits identifiers from the
// operator symbols = ! ( ) , > <, and a recursive-descent parser over the token list.

namespace {

enum class Tok { End, Ident, In, NotIn, Equals, DoubleEquals, NotEquals, Gt, Lt, Bang, Open, Close, Comma };

struct Token {
  Tok tok;
  std::string_view text;
  std::size_t pos;
};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool isSymbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<': return true;
    default: return false;
  }
}

std::optional<Tok> symbolToken(std::string_view s) {
  if (s == "=") return Tok::Equals;
  if (s == "==") return Tok::DoubleEquals;
  if (s == "!=") return Tok::NotEquals;
  if (s == "!") return Tok::Bang;
  if (s == ">") return Tok::Gt;
  if (s == "<") return Tok::Lt;
  if (s == "(") return Tok::Open;
  if (s == ")") return Tok::Close;
  if (s == ",") return Tok::Comma;
  return std::nullopt;
}

std::vector<Token> lex(std::string_view text) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && isSpace(text[i])) ++i;
    if (i == text.size()) break;
    const std::size_t start = i;
    if (isSymbol(text[i])) {
      // Longest run of symbols that still forms a token ("!=" and "==", else one character).
      std::optional<Tok> best;
      std::size_t bestLen = 0;
      for (std::size_t len = 1; start + len <= text.size() && isSymbol(text[start + len - 1]); ++len) {
        if (auto t = symbolToken(text.substr(start, len))) {
          best = t;
          bestLen = len;
        } else {
          break;
        }
      }
      out.push_back({*best, text.substr(start, bestLen), start});  // every single symbol is a token
      i = start + bestLen;
      continue;
    }
    while (i < text.size() && !isSymbol(text[i]) && !isSpace(text[i])) ++i;
    const std::string_view word = text.substr(start, i - start);
    const Tok t = word == "in" ? Tok::In : word == "notin" ? Tok::NotIn : Tok::Ident;
    out.push_back({t, word, start});
  }
  out.push_back({Tok::End, {}, text.size()});
  return out;
}

class SelectorParser {
 public:
  explicit SelectorParser(std::string_view text) : text_(text), tokens_(lex(text)) {}

  Result<LabelSelector> parse() {
    LabelSelector out;
    while (true) {
      const Token& t = peekValue();
      if (t.tok == Tok::End) return out;
      if (t.tok != Tok::Ident && t.tok != Tok::Bang) return fail(t, "!, identifier, or end of string");
      if (Status s = parseRequirement(out); !s) return s;
      const Token& next = nextValue();
      if (next.tok == Tok::End) return out;
      if (next.tok != Tok::Comma) return fail(next, "',' or end of string");
      const Token& after = peekValue();
      if (after.tok != Tok::Ident && after.tok != Tok::Bang) return fail(after, "identifier after ','");
    }
  }

 private:
  // In value positions the keywords "in"/"notin" are ordinary identifiers, as upstream treats them.
  Token asValue(Token t) const {
    if (t.tok == Tok::In || t.tok == Tok::NotIn) t.tok = Tok::Ident;
    return t;
  }
  Token peekValue() const { return asValue(tokens_[pos_]); }
  Token nextValue() { return asValue(next()); }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }

  Status fail(const Token& t, std::string_view expected) const {
    const std::string found = t.tok == Tok::End ? "end of string" : "'" + std::string(t.text) + "'";
    return error(t.pos, "found " + found + ", expected: " + std::string(expected));
  }
  Status error(std::size_t pos, const std::string& what) const {
    return Status::error("invalid selector \"" + std::string(text_) + "\": at position " + std::to_string(pos) + ": " +
                         what);
  }

  Status parseRequirement(LabelSelector& out) {
    Token t = nextValue();
    const bool negated = t.tok == Tok::Bang;
    if (negated) t = nextValue();
    if (t.tok != Tok::Ident) return fail(t, "identifier");
    const std::string key(t.text);
    if (auto p = labelKeyProblem(key); !p.empty()) return error(t.pos, "invalid label key \"" + key + "\": " + p);
    const Tok la = peekValue().tok;
    if (negated) {
      out.matchExpressions.push_back({key, LabelSelectorOp::DoesNotExist, {}});
      return Status::ok();
    }
    if (la == Tok::End || la == Tok::Comma) {
      out.matchExpressions.push_back({key, LabelSelectorOp::Exists, {}});
      return Status::ok();
    }
    const Token& opTok = next();
    std::vector<std::string> values;
    switch (opTok.tok) {
      case Tok::In:
      case Tok::NotIn: {
        if (Status s = parseValueSet(values); !s) return s;
        break;
      }
      case Tok::Equals:
      case Tok::DoubleEquals:
      case Tok::NotEquals:
      case Tok::Gt:
      case Tok::Lt: {
        if (Status s = parseExactValue(values); !s) return s;
        break;
      }
      default: return fail(opTok, "in, notin, =, ==, !=, >, <");
    }
    for (const auto& v : values) {
      if (auto p = labelValueProblem(v); !p.empty()) {
        return error(opTok.pos, "invalid label value \"" + v + "\" for key \"" + key + "\": " + p);
      }
    }
    switch (opTok.tok) {
      case Tok::In: out.matchExpressions.push_back({key, LabelSelectorOp::In, std::move(values)}); break;
      case Tok::NotIn:
      case Tok::NotEquals: out.matchExpressions.push_back({key, LabelSelectorOp::NotIn, std::move(values)}); break;
      case Tok::Equals:
      case Tok::DoubleEquals: out.matchLabels.emplace_back(key, std::move(values.front())); break;
      default: {
        if (!parseLabelInt64(values.front())) {
          return error(opTok.pos,
                       "value \"" + values.front() + "\" of '" + std::string(opTok.text) + "' must be an integer");
        }
        const auto op = opTok.tok == Tok::Gt ? LabelSelectorOp::Gt : LabelSelectorOp::Lt;
        out.matchExpressions.push_back({key, op, std::move(values)});
      }
    }
    return Status::ok();
  }

  // "(a,b)"; empty slots ("()", "(a,)", "(,a)") are the empty value, as upstream reads them.
  Status parseValueSet(std::vector<std::string>& values) {
    const Token& open = nextValue();
    if (open.tok != Tok::Open) return fail(open, "'('");
    bool expectValue = true;
    while (true) {
      const Token& t = nextValue();
      if (t.tok == Tok::Ident && expectValue) {
        values.emplace_back(t.text);
        expectValue = false;
      } else if (t.tok == Tok::Comma) {
        if (expectValue) values.emplace_back();
        expectValue = true;
      } else if (t.tok == Tok::Close) {
        if (expectValue) values.emplace_back();
        break;
      } else {
        return fail(t, expectValue ? "',', ')' or identifier" : "',' or ')'");
      }
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return Status::ok();
  }

  // A single value after =, ==, !=, >, <; nothing before ',' or the end is the empty value.
  Status parseExactValue(std::vector<std::string>& values) {
    const Tok la = peekValue().tok;
    if (la == Tok::End || la == Tok::Comma) {
      values.emplace_back();
      return Status::ok();
    }
    const Token& t = nextValue();
    if (t.tok != Tok::Ident) return fail(t, "identifier");
    values.emplace_back(t.text);
    return Status::ok();
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<LabelSelector> parseLabelSelector(std::string_view text) { return SelectorParser(text).parse(); }

}  // namespace kdesched::api
