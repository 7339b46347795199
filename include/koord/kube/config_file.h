// Reading a role's --config file: bounded in size, errors naming the file, and the fields it sets
// that koord accepts without acting on them logged once at startup.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "koord/kube/component_config.h"
#include "koord/kube/error.h"

namespace koord::kube {

/// Far above any real configuration; a larger file is a mistake (the wrong path, a device) that
/// would otherwise be read whole into memory.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{4} << 20;

/// The file's text; "<path>: cannot read: <reason>", or an error naming the path and the limit
/// when the file holds more than `limit` bytes.
Expected<std::string> readConfigFile(const std::string& path,
                                     std::size_t limit = kMaxConfigFileBytes);

/// `error` with "<path>: " before its message.
Error inConfigFile(std::string_view path, const Error& error);

/// One warning line per inert field, naming the file.
void warnInertFields(std::string_view path, const ComponentBase& config);

/// What a role's --config loader does: reads the file, hands its text to `parse` (which answers
/// an Expected of a configuration derived from ComponentBase), names the file in errors, and
/// logs the inert fields of what it accepted.
template <typename Config, typename Parse>
Expected<Config> loadComponentConfig(const std::string& path, Parse&& parse) {
  auto text = readConfigFile(path);
  if (!text)
    return text.error();
  Expected<Config> config = parse(std::string_view(*text));
  if (!config)
    return inConfigFile(path, config.error());
  warnInertFields(path, *config);
  return config;
}

}  // namespace koord::kube
