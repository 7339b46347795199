// The koord multi-call binary: only the role table lives here (see roles/roles.def).
#include "koord/core/multicall.h"

#define KOORD_ROLE(id, name, binary, summary) \
  namespace koord::roles::id {                \
  int roleMain(int argc, char** argv);        \
  }
#include "roles.def"
#undef KOORD_ROLE

namespace {
constexpr koord::RoleEntry kRoles[] = {
#define KOORD_ROLE(id, name, binary, summary) {name, binary, summary, &koord::roles::id::roleMain},
#include "roles.def"
#undef KOORD_ROLE
};
}  // namespace

int main(int argc, char** argv) {
  return koord::runMulticall(kRoles, argc, argv);
}
