// Task equality and the compiler's program deduplication hash both read
// Task::fields(); these tests change one field at a time (down to the members
// of Work) and check that both notice.
#include "models/tile_program.h"

#include <cstddef>
#include <tuple>
#include <type_traits>

#include <catch2/catch.hpp>

namespace wafersim {
namespace {

// Calls visit(leaf) for every listed field of `value`, recursing into fields
// that list fields of their own. fields() hands out const references; the
// callers here pass objects that are not const, so writing through them is fine.
template <class T, class Visit>
void for_each_leaf(const T& value, Visit& visit) {
  if constexpr (field_list_detail::HasFields<T>::value)
    std::apply([&visit](const auto&... field) { (for_each_leaf(field, visit), ...); }, value.fields());
  else
    visit(const_cast<T&>(value));
}

// Gives a leaf field another value of its type.
template <class T>
void change(T& value) {
  if constexpr (std::is_enum_v<T>)
    value = T(std::underlying_type_t<T>(value) + 1);
  else
    value = T(value + 1);
}

size_t leaf_count(const Task& task) {
  size_t n = 0;
  auto count = [&n](auto&) { ++n; };
  for_each_leaf(task, count);
  return n;
}

}  // namespace

TEST_CASE("Tasks that differ in any one field neither compare equal nor hash alike", "[tile_program]") {
  Task base;
  base.op = TaskOp::Send;
  base.dx = -3;
  base.bytes = 64;
  base.kv_offset = Task::kTileParam;
  const size_t leaves = leaf_count(base);
  // Two of the listed fields are Work, each with its own fields.
  REQUIRE(leaves == listed_fields<Task>() - 2 + 2 * listed_fields<Work>());

  const Task copy = base;
  CHECK(copy == base);
  CHECK(hash_fields(kFieldHashSeed, copy) == hash_fields(kFieldHashSeed, base));
  for (size_t k = 0; k < leaves; ++k) {
    Task changed = base;
    size_t index = 0;
    auto change_kth = [&](auto& field) {
      if (index++ == k) change(field);
    };
    for_each_leaf(changed, change_kth);
    INFO("leaf field " << k << " in Task::fields() order");
    CHECK_FALSE(changed == base);
    CHECK(hash_fields(kFieldHashSeed, changed) != hash_fields(kFieldHashSeed, base));
  }
}

TEST_CASE("a field left out of a fields() list is caught at compile time", "[tile_program]") {
  // tile_program.h and cost.h assert aggregate_members == listed_fields for
  // Task and Work; this is what such an assertion sees when a field is missing.
  struct Complete {
    int a = 0;
    Work b;
    auto fields() const { return std::tie(a, b); }
  };
  struct MissingOne {
    int a = 0;
    Work b;
    bool c = false;
    auto fields() const { return std::tie(a, b); }
  };
  STATIC_REQUIRE(aggregate_members<Complete>() == listed_fields<Complete>());
  STATIC_REQUIRE(aggregate_members<MissingOne>() != listed_fields<MissingOne>());
  STATIC_REQUIRE(aggregate_members<Task>() == listed_fields<Task>());
}

}  // namespace wafersim
