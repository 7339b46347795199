// File reads and atomic writes for certificates and keys, so a reader (such as the server's
// certificate reload) never sees a half-written file.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "koord/core/result.h"

namespace koord::http {

/// The whole file; errors carry errno.
Result<std::string> readFile(const std::string& path);

/// Writes to a temporary file in the same directory, fsyncs it, sets `mode` and renames it over
/// `path`, so readers see the old content or the new, never a mix.
Result<void> writeFileAtomic(const std::string& path, std::string_view content, mode_t mode = 0600);

}  // namespace koord::http
