#include "koord/core/strconv.h"

namespace koord {

std::optional<bool> parseGoBool(std::string_view v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True")
    return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") {
    return false;
  }
  return std::nullopt;
}

}  // namespace koord
