// Suggestions for misspelt names: the args reader's unknown fields and the registry's unknown
// plugin names answer "did you mean ...?" with the closest known one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kdesched::policy {

// Edit distance (insertions, deletions, substitutions and adjacent transpositions all cost 1).
std::size_t editDistance(std::string_view a, std::string_view b);

// The closest candidate within maxDistance, or "" when none. A candidate that would need half of
// the longer word rewritten is not suggested either ("ab" is not a typo of "cd").
std::string closestMatch(std::string_view word, const std::vector<std::string>& candidates,
                         std::size_t maxDistance = 3);

}  // namespace kdesched::policy
