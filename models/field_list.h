#pragma once
// A struct that lists its fields once, in a `fields()` member returning a
// std::tie of them, derives equality and hashing from that one list. A
// static_assert(aggregate_members<T>() == listed_fields<T>()) next to the
// struct then turns a field left out of the list into a compile error.
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace wafersim {

namespace field_list_detail {

// Converts to anything, so T{AnyField{}, ...} compiles with up to as many
// initialisers as aggregate T has members, and not with one more.
struct AnyField {
  template <class T>
  constexpr operator T() const noexcept;  // only named in unevaluated contexts, never defined
};

template <class T, class Indices, class = void>
struct BraceInitialisable : std::false_type {};
template <class T, size_t... I>
struct BraceInitialisable<T, std::index_sequence<I...>, std::void_t<decltype(T{(void(I), AnyField{})...})>>
    : std::true_type {};

template <class T, class = void>
struct HasFields : std::false_type {};
template <class T>
struct HasFields<T, std::void_t<decltype(std::declval<const T&>().fields())>> : std::true_type {};

}  // namespace field_list_detail

// Number of non-static data members of aggregate T.
template <class T, size_t N = 0>
constexpr size_t aggregate_members() {
  if constexpr (field_list_detail::BraceInitialisable<T, std::make_index_sequence<N + 1>>::value)
    return aggregate_members<T, N + 1>();
  else
    return N;
}

// Number of fields T::fields() lists.
template <class T>
constexpr size_t listed_fields() {
  return std::tuple_size_v<decltype(std::declval<const T&>().fields())>;
}

namespace field_list_detail {

template <class Tuple, size_t... I>
bool equal_tuples(const Tuple& a, const Tuple& b, std::index_sequence<I...>) {
  return ((std::get<I>(a) == std::get<I>(b)) && ...);
}

}  // namespace field_list_detail

// Whether every listed field of `a` equals the same field of `b`: one fold,
// which the compiler inlines whole where std::tuple's == recurses through a
// call per field (a compiler compares millions of tasks).
template <class T>
bool equal_fields(const T& a, const T& b) {
  const auto x = a.fields(), y = b.fields();
  return field_list_detail::equal_tuples(x, y, std::make_index_sequence<std::tuple_size_v<decltype(x)>>{});
}

constexpr uint64_t kFieldHashSeed = 1469598103934665603ull;  // FNV-1 offset basis

namespace field_list_detail {

constexpr uint64_t kPrime = 1099511628211ull;  // FNV-1 prime

// FNV-1 over 64-bit words, field by field: every step a bijection of `hash`.
template <class T>
uint64_t fold(uint64_t hash, const T& value) {
  if constexpr (HasFields<T>::value) {
    std::apply([&hash](const auto&... field) { ((hash = fold(hash, field)), ...); }, value.fields());
    return hash;
  } else {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>, "give this type a fields() list");
    return (hash ^ uint64_t(value)) * kPrime;
  }
}

// Field I of the struct into lane I % 4.
template <class Tuple, size_t... I>
void fold_into_lanes(uint64_t (&lanes)[4], const Tuple& fields, std::index_sequence<I...>) {
  ((lanes[I % 4] = fold(lanes[I % 4], std::get<I>(fields))), ...);
}

}  // namespace field_list_detail

// Folds `value` into `hash` (FNV-1 over 64-bit words): integers and enums as
// they are, structs with fields() field by field, a struct's own fields in
// four lanes so that the multiplications overlap (the compiler hashes
// millions of tasks), the lanes folded together at the end. Only the first
// lane starts from `hash`. Every step is a bijection of its lane and the end
// one of each lane, so a change to `hash` or to any one field changes the result.
template <class T>
uint64_t hash_fields(uint64_t hash, const T& value) {
  using field_list_detail::kPrime;
  if constexpr (field_list_detail::HasFields<T>::value) {
    const auto fields = value.fields();
    uint64_t lanes[4] = {hash, kFieldHashSeed + 1, kFieldHashSeed + 2, kFieldHashSeed + 3};
    field_list_detail::fold_into_lanes(lanes, fields, std::make_index_sequence<std::tuple_size_v<decltype(fields)>>{});
    return (((lanes[0] ^ lanes[1]) * kPrime ^ lanes[2]) * kPrime ^ lanes[3]) * kPrime;
  } else {
    return field_list_detail::fold(hash, value);
  }
}

}  // namespace wafersim
