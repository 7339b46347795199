// The koord multi-call binary: only the role table lives here (see roles/roles.def).
#include "koord/core/multicall.h"

#define KOORD_ROLE(id, name, binary, summary) \
  namespace koord::roles::id {                \
  int roleMain(int argc, char** argv);        \
  }
// A role with an executable of its own is run from beside this one, with the same arguments.
#define KOORD_ROLE_OWN_EXECUTABLE(id, name, binary, summary) \
  namespace koord::roles::id {                               \
  int execMain(int argc, char** argv) {                      \
    return koord::execBesideSelf(binary, argc, argv);        \
  }                                                          \
  }
#define KOORD_COMMAND(name, summary)
#include "roles.def"
#undef KOORD_ROLE
#undef KOORD_ROLE_OWN_EXECUTABLE
#undef KOORD_COMMAND

namespace {
constexpr koord::RoleEntry kRoles[] = {
#define KOORD_ROLE(id, name, binary, summary) \
  {name, binary, summary, &koord::roles::id::roleMain, false},
#define KOORD_ROLE_OWN_EXECUTABLE(id, name, binary, summary) \
  {name, binary, summary, &koord::roles::id::execMain, false},
#define KOORD_COMMAND(name, summary) {name, "", summary, &koord::roles::cli::roleMain, true},
#include "roles.def"
#undef KOORD_ROLE
#undef KOORD_ROLE_OWN_EXECUTABLE
#undef KOORD_COMMAND
};
}  // namespace

int main(int argc, char** argv) {
  return koord::runMulticall(kRoles, argc, argv);
}
