// Go's time.Duration text form ("1m30s", "500ms", "900s"), which every Koordinator flag and
// config file uses for intervals; parsed strictly, printed the way Go prints it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace koord {

/// Parses a Go duration: optional sign, then one or more <decimal><unit> with units ns, us
/// (or µs), ms, s, m, h. "0" alone is accepted. Returns nullopt on any other input or overflow.
std::optional<std::chrono::nanoseconds> parseGoDuration(std::string_view text);

/// Formats like Go's Duration.String(): "1h0m0s", "1m30s", "1.5s", "500ms", "0s".
std::string formatGoDuration(std::chrono::nanoseconds d);

}  // namespace koord
