// SPDX-License-Identifier: MIT
// Configuration tree with origins, and the schema that validates it.
//
// Every value remembers where it came from (file:line:column, "--set key=value", or
// "default"), so an error names the place to fix. Models declare their keys in a Spec
// (name, type, unit, range, default, one line of doc); the platform composes those into one
// schema that validates the merged tree before anything is built, fills defaults, and
// generates docs/config-reference.md, so docs and code cannot drift.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"

namespace dvp::cfg {

struct Origin {
  std::string file;  // file name, "--set ...", or "default"
  int line = 0;      // 1-based; 0 when not from a file
  int column = 0;
  std::string str() const;
};

class Node;

class ConfigError : public Error {
 public:
  ConfigError(const Origin& where, const std::string& path, const std::string& msg);
};

class Node {
 public:
  enum class Kind { Null, Scalar, Map, Seq };

  Node() = default;
  static Node scalar(std::string text, Origin o, std::string path);
  static Node map(Origin o, std::string path);

  Kind kind() const { return kind_; }
  bool is_map() const { return kind_ == Kind::Map; }
  bool is_seq() const { return kind_ == Kind::Seq; }
  bool is_scalar() const { return kind_ == Kind::Scalar; }
  bool is_null() const { return kind_ == Kind::Null; }
  const Origin& origin() const { return origin_; }
  const std::string& path() const { return path_; }  // dotted, e.g. platform.dram.tRCD
  const std::string& text() const { return text_; }

  // Maps.
  const Node* find(const std::string& key) const;
  Node* find(const std::string& key);
  bool has(const std::string& key) const { return find(key) != nullptr; }
  const Node& at(const std::string& key) const;   // throws ConfigError naming the map
  Node& set(const std::string& key, Node value);  // insert or replace, keeps order
  bool erase(const std::string& key);
  const std::vector<std::pair<std::string, Node>>& entries() const { return map_; }

  // Sequences.
  const std::vector<Node>& items() const { return seq_; }
  void push(Node n);

  // Typed reads of this node (throw ConfigError naming origin and path).
  std::int64_t as_int() const;
  std::uint64_t as_uint() const;
  double as_double() const;
  bool as_bool() const;
  const std::string& as_string() const;

  // Typed reads of a child.
  std::int64_t get_int(const std::string& key) const { return at(key).as_int(); }
  std::uint64_t get_uint(const std::string& key) const { return at(key).as_uint(); }
  double get_double(const std::string& key) const { return at(key).as_double(); }
  bool get_bool(const std::string& key) const { return at(key).as_bool(); }
  const std::string& get_string(const std::string& key) const { return at(key).as_string(); }
  std::vector<std::uint64_t> get_uint_list(const std::string& key) const;
  std::vector<std::string> get_string_list(const std::string& key) const;

  // An error about this node's value, with its origin.
  [[noreturn]] void fail(const std::string& msg) const;

  // Rewrites paths below this node (after moving a subtree).
  void repath(const std::string& path);
  // Gives this node and everything below it one origin.
  void retag(const Origin& o);
  std::vector<Node>& items_mut() { return seq_; }

 private:
  friend Node from_yaml_text(const std::string&, const std::string&);
  Kind kind_ = Kind::Null;
  std::string text_;
  Origin origin_;
  std::string path_;
  std::vector<std::pair<std::string, Node>> map_;
  std::vector<Node> seq_;
  friend struct NodeBuilder;
  friend void merge(Node& base, const Node& over);
};

// Parsing. Syntax errors become ConfigError with file and line.
Node load_file(const std::string& path, const std::string& root_path = "");
Node from_yaml_text(const std::string& text, const std::string& file_name);

// Deep merge: maps merge key by key, anything else in `over` replaces.
void merge(Node& base, const Node& over);

// --set a.b.c=value: value is parsed as YAML (so lists and maps work too).
void set_dotted(Node& root, const std::string& assignment);
// The node a dotted key names, as --set names it (traffic[0].count), or null where there is none;
// a malformed key is a ConfigError at `o`.
const Node* find_dotted(const Node& root, const std::string& key, const Origin& o);

// Emits YAML; with origins, each scalar carries a "# file:line" comment.
std::string dump(const Node& n, bool with_origins);

// ---------------------------------------------------------------------------------------
// Schema

enum class Type { Int, Float, Bool, String, Enum, IntList, StringList, Section, ObjectList };

class Spec {
 public:
  Spec() = default;
  Spec(std::string name, Type type, std::string doc);

  // Children of a Section (or of the element of an ObjectList).
  Spec& section(const std::string& name, const std::string& doc);
  Spec& object_list(const std::string& name, const std::string& doc);  // returns element spec
  Spec& param(const std::string& name, Type type, const std::string& doc);

  // Builders, applied to this parameter.
  Spec& unit(const std::string& u) {
    unit_ = u;
    return *this;
  }
  Spec& range(double lo, double hi) {
    min_ = lo;
    max_ = hi;
    return *this;
  }
  Spec& min(double lo) {
    min_ = lo;
    return *this;
  }
  Spec& choices(std::vector<std::string> c) {
    choices_ = std::move(c);
    return *this;
  }
  Spec& defaults(const std::string& text) {
    default_ = text;
    return *this;
  }
  Spec& optional() {
    optional_ = true;
    return *this;
  }
  Spec& power_of_two() {
    pow2_ = true;
    return *this;
  }
  // Accept any map below (free-form), e.g. scenario-level blocks owned by later models.
  Spec& open() {
    open_ = true;
    return *this;
  }

  const std::string& name() const { return name_; }
  Type type() const { return type_; }
  const std::string& unit_name() const { return unit_; }
  const Spec* child(const std::string& name) const;
  // For "did you mean": the key at this level a misspelled `name` most likely meant, or "".
  std::string closest_child(const std::string& name) const;
  Spec* child_mut(const std::string& name);
  const std::vector<std::unique_ptr<Spec>>& children() const { return children_; }

  // Validates n against this spec and fills defaults. Errors are appended, not thrown,
  // so a user sees every problem in one go.
  void validate(Node& n, std::vector<std::string>& errors) const;

  // Markdown reference of this spec and its children.
  std::string markdown(const std::string& prefix = "") const;

 private:
  void check_scalar(const Node& n, std::vector<std::string>& errors) const;
  std::string type_name() const;

  std::string name_;
  Type type_ = Type::Section;
  std::string doc_;
  std::string unit_;
  std::optional<double> min_, max_;
  std::vector<std::string> choices_;
  std::optional<std::string> default_;
  bool optional_ = false;
  bool pow2_ = false;
  bool open_ = false;
  std::vector<std::unique_ptr<Spec>> children_;
};

// Validate and throw a single ConfigError listing every problem.
void validate_or_throw(const Spec& spec, Node& root);

// One choice a configuration makes (a policy, a mode, a format): each option's name, what it
// stands for in the model (an enum value, or a policy's factory) and one line of doc, in one
// table that gives the schema its choices and the model its value. Adding an option is a line
// here plus the code it names; no string is compared again after parsing.
template <typename T>
class Choices {
 public:
  struct Option {
    const char* name;
    T value;
    const char* doc;
  };
  Choices(std::initializer_list<Option> options) : options_(options) {}
  explicit Choices(std::vector<Option> options) : options_(std::move(options)) {}

  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const Option& o : options_) n.push_back(o.name);
    return n;
  }
  // "name: doc; name: doc", for the key's line in the reference.
  std::string doc() const {
    std::string d;
    for (const Option& o : options_) d += std::string(d.empty() ? "" : "; ") + o.name + ": " + o.doc;
    return d;
  }
  // The value the option named by `n` stands for (the schema has checked the name).
  const T& parse(const Node& n) const {
    for (const Option& o : options_)
      if (n.as_string() == o.name) return o.value;
    n.fail("'" + n.as_string() + "' is not one of the choices");
  }
  // The value of the option called `name`, or null.
  const T* find(const std::string& name) const {
    for (const Option& o : options_)
      if (name == o.name) return &o.value;
    return nullptr;
  }
  // The option's name for a value (for messages and reports).
  const char* name_of(const T& v) const {
    for (const Option& o : options_)
      if (o.value == v) return o.name;
    return "?";
  }

 private:
  std::vector<Option> options_;
};

// The Levenshtein distance between a and b: a letter doubled, dropped or swapped for another is
// one edit. What a misspelt key or name most likely meant is the one nearest to it.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace dvp::cfg
