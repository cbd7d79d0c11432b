// SPDX-License-Identifier: MIT
// Statistics groups: every module owns one Group named after its SystemC hierarchical name
// and fills counters in its hot path through plain references; one writer (its system's
// Registry) dumps all groups to stats.json at the end of a run. Derived values (rates, fractions) are
// formulas evaluated only at dump time.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sc_core {
class sc_object;
}

namespace dvp::stats {

class Registry;

class Group {
 public:
  // The statistics of `owner`, named after it, in the registry of the system it belongs to.
  explicit Group(const sc_core::sc_object& owner);
  Group(Registry& registry, std::string name);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  const std::string& name() const { return name_; }

  // What a counter counts: time and traffic (every run), or data values (only a functional
  // run moves them: a timing-only run leaves it 0, and a check on it does not apply).
  enum class Counts { Traffic, Data };
  // A counter; the reference stays valid for the group's life.
  std::uint64_t& counter(const std::string& key, const std::string& doc, Counts counts = Counts::Traffic);
  bool counts_data(const std::string& key) const;
  // A value computed when stats are written.
  void formula(const std::string& key, const std::string& doc, std::function<double()> f);
  // A structured value (per-bank tables and the like).
  void json(const std::string& key, const std::string& doc, std::function<nlohmann::json()> f);

  nlohmann::json to_json() const;
  // key -> doc, for docs/models.md.
  std::vector<std::pair<std::string, std::string>> describe() const;

 private:
  struct Entry {
    std::string key, doc;
    std::uint64_t count = 0;
    std::function<double()> formula;
    std::function<nlohmann::json()> json;
    Counts counts = Counts::Traffic;
  };
  Registry& registry_;
  std::string name_;
  std::deque<Entry> entries_;
};

// A system's statistics (System::stats()): its groups, in the order they were built.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  void add(Group* g);
  void remove(Group* g);
  const std::vector<Group*>& groups() const { return groups_; }
  const Group* find(const std::string& name) const;
  nlohmann::json to_json() const;  // { "<hierarchical name>": { counters... }, ... }

 private:
  std::vector<Group*> groups_;
};

}  // namespace dvp::stats
