#include <memory>

#include <catch2/catch.hpp>

#include "framework/cycle_state.h"

using namespace koord::roles::scheduler;

namespace {

struct Counter : StateData {
  explicit Counter(int v) : value(v) {}
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Counter>(value); }
  int value;
};

struct Other : StateData {
  std::unique_ptr<StateData> clone() const override { return std::make_unique<Other>(); }
};

}  // namespace

TEST_CASE("CycleState reads back what was written, by key and type") {
  CycleState state;
  CHECK(state.read<Counter>("fit") == nullptr);
  state.write("fit", std::make_unique<Counter>(1));
  state.write("spread", std::make_unique<Other>());
  REQUIRE(state.read<Counter>("fit") != nullptr);
  CHECK(state.read<Counter>("fit")->value == 1);
  CHECK(state.read<Other>("fit") == nullptr);  // another type
  CHECK(state.read<Other>("spread") != nullptr);
  CHECK(state.read<Counter>("missing") == nullptr);

  state.write("fit", std::make_unique<Counter>(2));  // replaces
  CHECK(state.read<Counter>("fit")->value == 2);
  state.readMutable<Counter>("fit")->value = 3;
  CHECK(state.read<Counter>("fit")->value == 3);

  state.erase("fit");
  CHECK(state.read<Counter>("fit") == nullptr);
  CHECK(state.read<Other>("spread") != nullptr);
}

TEST_CASE("CycleState::clone copies deeply") {
  CycleState state;
  state.write("fit", std::make_unique<Counter>(7));
  state.write("empty", nullptr);
  state.skip_filter_plugins_for_nominated = true;

  CycleState copy = state.clone();
  CHECK(copy.skip_filter_plugins_for_nominated);
  REQUIRE(copy.read<Counter>("fit") != nullptr);
  CHECK(copy.read<Counter>("fit") != state.read<Counter>("fit"));
  copy.readMutable<Counter>("fit")->value = 8;
  CHECK(state.read<Counter>("fit")->value == 7);
  CHECK(copy.read<Counter>("empty") == nullptr);

  copy.erase("fit");
  CHECK(state.read<Counter>("fit") != nullptr);
}
