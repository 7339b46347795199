// The build's version and git commit, as `koord version` and every role's startup line report.
// Defined in a generated file so that a new commit relinks koord without recompiling the rest.
#pragma once

#include <string_view>

namespace koord {
std::string_view versionString();
std::string_view gitCommit();
}  // namespace koord
