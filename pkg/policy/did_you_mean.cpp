#include "pkg/policy/did_you_mean.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace kdesched::policy {

std::size_t editDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment over three rolling rows: keys are short, this is never hot.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closestMatch(std::string_view word, const std::vector<std::string>& candidates, std::size_t maxDistance) {
  std::string best;
  std::size_t bestDistance = std::numeric_limits<std::size_t>::max();
  for (const std::string& c : candidates) {
    std::size_t d = editDistance(word, c);
    if (d > maxDistance || d * 2 > std::max(word.size(), c.size())) continue;
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace kdesched::policy
