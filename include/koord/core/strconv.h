// Go's strconv spellings for the values koord reads from flags, gates and config: the same
// words a Go component accepts must mean the same thing here, and nothing else is accepted.
#pragma once

#include <optional>
#include <string_view>

namespace koord {

/// strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False.
std::optional<bool> parseGoBool(std::string_view v);

}  // namespace koord
