// The koordlet flags koord accepts with Koordinator's name, type and default but that change
// nothing here, each with why; a flag set on the command line gets one warning line at startup.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace koord {
class FlagSet;
}

namespace koord::roles::koordlet {

struct InertFlag {
  std::string_view name;  // without dashes, as registered
  std::string_view why;
};

/// Every koordlet flag without effect, by name.
std::span<const InertFlag> koordletInertFlags();

/// One warning line per inert flag given on the command line ("koordlet: -tsdb-stripe-size has
/// no effect: ..."); returns how many.
std::size_t warnInertFlags(const FlagSet& flags);

}  // namespace koord::roles::koordlet
