// SPDX-License-Identifier: MIT
#include "stats.hpp"

#include <algorithm>
#include <cmath>

#include "system.hpp"

namespace dvp::stats {

Group::Group(const sc_core::sc_object& owner) : Group(system_of(owner).stats(), owner.name()) {}
Group::Group(Registry& registry, std::string name) : registry_(registry), name_(std::move(name)) {
  registry_.add(this);
}
Group::~Group() { registry_.remove(this); }

std::uint64_t& Group::counter(const std::string& key, const std::string& doc, Counts counts) {
  entries_.push_back(Entry{key, doc, 0, {}, {}, counts});
  return entries_.back().count;
}

bool Group::counts_data(const std::string& key) const {
  for (auto& e : entries_)
    if (e.key == key) return e.counts == Counts::Data;
  return false;
}

void Group::formula(const std::string& key, const std::string& doc, std::function<double()> f) {
  entries_.push_back(Entry{key, doc, 0, std::move(f), {}});
}

void Group::json(const std::string& key, const std::string& doc, std::function<nlohmann::json()> f) {
  entries_.push_back(Entry{key, doc, 0, {}, std::move(f)});
}

nlohmann::json Group::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (auto& e : entries_) {
    if (e.json) {
      j[e.key] = e.json();
    } else if (e.formula) {
      double v = e.formula();
      j[e.key] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
    } else {
      j[e.key] = e.count;
    }
  }
  return j;
}

std::vector<std::pair<std::string, std::string>> Group::describe() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& e : entries_)
    out.emplace_back(e.key, e.counts == Counts::Data ? e.doc + " (functional runs only)" : e.doc);
  return out;
}

void Registry::add(Group* g) { groups_.push_back(g); }

void Registry::remove(Group* g) { groups_.erase(std::remove(groups_.begin(), groups_.end(), g), groups_.end()); }

const Group* Registry::find(const std::string& name) const {
  for (auto* g : groups_)
    if (g->name() == name) return g;
  return nullptr;
}

nlohmann::json Registry::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (auto* g : groups_) j[g->name()] = g->to_json();
  return j;
}

}  // namespace dvp::stats
