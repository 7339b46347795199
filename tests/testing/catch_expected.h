// Lets Catch print a kube::Expected (and so accept CHECK_FALSE(result)): the error's message is
// what a failing test should show. Test-only; include after <catch2/catch.hpp>.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "koord/kube/error.h"

namespace Catch {

template <typename T>
struct StringMaker<boost::system::result<T, koord::kube::Error>> {
  static std::string convert(const boost::system::result<T, koord::kube::Error>& r) {
    return r ? std::string("a value") : "error: " + r.error().message;
  }
};

}  // namespace Catch
