#include "status.h"

namespace koord::roles::scheduler {

std::string Status::message() const {
  std::string out;
  for (const auto& r : reasons_) {
    if (!out.empty())
      out += ", ";
    out += r;
  }
  return out;
}

}  // namespace koord::roles::scheduler
