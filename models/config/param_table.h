#pragma once
// One table per configuration section: a row declares one parameter (path,
// type, unit, default, range, description) and names the member of the
// section's struct that its value fills. The schema and the copy out of a
// loaded Config are both generated from the rows, so a parameter is spelled
// once, and every declared parameter is read whenever its section is.
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "models/config/config.h"
#include "models/config/schema.h"

namespace wafersim::config {

// One choice of an enum parameter: the word a file writes and the value it stands for.
template <class Enum>
struct Choice {
  std::string name;
  Enum value;
};

template <class Spec>
class ParamTable {
 public:
  // Copies the value of row `path` into `spec` (reads it through `config`, which records the read).
  using Reader = std::function<void(const Config& config, const std::string& path, Spec& spec)>;
  struct Row {
    ParamSpec param;
    Reader read;
  };

  // A parameter copied as it is into a member: `member` is a pointer to member
  // or a callable returning a reference to it. The member's C++ type must suit
  // the parameter's type (checked here, so a mismatch fails at start-up).
  template <class Member>
  ParamTable& add(ParamSpec param, Member member) {
    using Value = std::decay_t<std::invoke_result_t<Member, Spec&>>;
    if (!holds<Value>(param))
      throw std::logic_error("parameter '" + param.path + "' (" + to_string(param.type) +
                             ") bound to a member of another type, or one too narrow for its range");
    rows_.push_back({std::move(param), [member](const Config& config, const std::string& path, Spec& spec) {
                       copy(config, path, std::invoke(member, spec));
                     }});
    return *this;
  }

  // An enum parameter: its choices, in the order `describe params` lists them, each with its value.
  template <class Enum, class Member>
  ParamTable& add_enum(std::string path, std::vector<Choice<Enum>> choices, std::string default_choice,
                       std::string description, Member member) {
    std::vector<std::string> names;
    for (const Choice<Enum>& choice : choices) names.push_back(choice.name);
    return add_converted(
        enum_param(std::move(path), std::move(names), std::move(default_choice), std::move(description)),
        [choices = std::move(choices), member](const Config& config, const std::string& path, Spec& spec) {
          const std::string& word = config.get_string(path);
          for (const Choice<Enum>& choice : choices)
            if (choice.name == word) std::invoke(member, spec) = choice.value;
        });
  }

  // A parameter whose value needs more than a copy (a word resolved against
  // other members read before it, a file name relative to its file): `read`
  // fetches it from the config and stores what it means.
  ParamTable& add_converted(ParamSpec param, Reader read) {
    rows_.push_back({std::move(param), std::move(read)});
    return *this;
  }

  // Every row of `part`, filling the member `member` picks out (a nested struct, an array element).
  template <class Part, class Member>
  ParamTable& add_table(const ParamTable<Part>& part, Member member) {
    for (const typename ParamTable<Part>::Row& row : part.rows())
      rows_.push_back({row.param, [read = row.read, member](const Config& config, const std::string& path, Spec& spec) {
                         read(config, path, std::invoke(member, spec));
                       }});
    return *this;
  }

  void declare(Schema& schema) const {
    for (const Row& row : rows_) schema.add(row.param);
  }

  // The struct with every row's value, in row order (a converter may use members read before it).
  Spec read(const Config& config) const {
    Spec spec{};
    for (const Row& row : rows_) row.read(config, row.param.path, spec);
    return spec;
  }

  const std::vector<Row>& rows() const { return rows_; }

 private:
  template <class T>
  struct IsVector : std::false_type {};
  template <class T>
  struct IsVector<std::vector<T>> : std::true_type {};

  // Integers must fit their member over the whole declared range: no value is cut short.
  template <class Integer>
  static bool fits(const ParamSpec& param) {
    return param.min >= double(std::numeric_limits<Integer>::min()) &&
           param.max <= double(std::numeric_limits<Integer>::max());
  }

  template <class Value>
  static bool holds(const ParamSpec& param) {
    const ParamType type = param.type;
    if constexpr (std::is_same_v<Value, bool>)
      return type == ParamType::Bool;
    else if constexpr (std::is_same_v<Value, std::string>)
      return type == ParamType::String || type == ParamType::Enum;
    else if constexpr (std::is_floating_point_v<Value>)
      return type == ParamType::Float;
    else if constexpr (std::is_integral_v<Value>)
      return (type == ParamType::Int || type == ParamType::IntOrAuto) && fits<Value>(param);
    else if constexpr (IsVector<Value>::value)
      return std::is_integral_v<typename Value::value_type> &&
             (type == ParamType::IntList || type == ParamType::IntOrList) && fits<typename Value::value_type>(param);
    else
      return false;
  }

  template <class Value>
  static void copy(const Config& config, const std::string& path, Value& out) {
    if constexpr (std::is_same_v<Value, bool>)
      out = config.get_bool(path);
    else if constexpr (std::is_same_v<Value, std::string>)
      out = config.get_string(path);
    else if constexpr (std::is_floating_point_v<Value>)
      out = Value(config.get_float(path));
    else if constexpr (std::is_integral_v<Value>)
      out = Value(config.get_int(path));
    else if constexpr (IsVector<Value>::value) {
      out.clear();
      for (int64_t element : config.get_int_or_list(path)) out.push_back(typename Value::value_type(element));
    } else {
      static_assert(IsVector<Value>::value, "this member needs add_enum or add_converted");
    }
  }

  std::vector<Row> rows_;
};

}  // namespace wafersim::config
