// A plugin's decision about one pod, as one value: a candidate it would evict, or a pod it skips,
// each with its reason. A plugin hands its verdicts to the Handle; the framework alone turns them
// into the eviction (through the profile's evictor), the `plan --explain` row and whatever else
// reads decisions, so no plugin keeps a second copy of its reasoning to explain itself.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace kdesched::framework {

// A reason without numbers: a fixed sentence.
struct FixedReason {
  const char* words;
  std::string text() const { return words; }
};

// A plugin's reason as data: a small trivially copyable struct holding the rule's numbers and
// pointers to what it is about (the other pod, the node, the plugin's args: they outlive the
// plugin run a verdict lives in), with `std::string text() const` that says it for people.
template <class R>
concept ReasonFacts = std::is_trivially_copyable_v<R> && sizeof(R) <= 64 && alignof(R) <= alignof(std::max_align_t) &&
                      requires(const R& r) {
  { r.text() } -> std::convertible_to<std::string>;
};

// Why, rendered to text only when someone reads it (an eviction's log line, an explain row): a
// skipped pod nobody asks about costs a copy of its facts, never a string. Text a plugin already
// composed (a reason built of parts) is taken as it is.
class Reason {
 public:
  Reason(std::string text) : text_(std::move(text)) {}       // NOLINT: text is a reason
  Reason(const char* words) : Reason(FixedReason{words}) {}  // NOLINT: a literal is a reason
  template <ReasonFacts R>
  Reason(const R& facts) : render_(&renderOf<R>) {  // NOLINT: facts are a reason
    std::memcpy(facts_, &facts, sizeof(R));
  }

  std::string text() const { return render_ ? render_(facts_) : text_; }
  // The facts, when the reason is an `R` (for code that branches on the rule); else null.
  template <ReasonFacts R>
  const R* facts() const {
    return render_ == &renderOf<R> ? std::launder(reinterpret_cast<const R*>(facts_)) : nullptr;
  }

 private:
  template <class R>
  static std::string renderOf(const void* p) {
    return static_cast<const R*>(p)->text();
  }
  alignas(std::max_align_t) unsigned char facts_[64]{};
  std::string (*render_)(const void*) = nullptr;
  std::string text_;
};

struct Verdict {
  enum class Kind { Candidate, Skip };
  Kind kind;
  Reason reason;

  static Verdict candidate(Reason why) { return {Kind::Candidate, std::move(why)}; }
  static Verdict skip(Reason why) { return {Kind::Skip, std::move(why)}; }
  bool isCandidate() const { return kind == Kind::Candidate; }
};

}  // namespace kdesched::framework
