// SPDX-License-Identifier: MIT
#include "config.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace dvp::cfg {

std::string Origin::str() const {
  if (line > 0) return file + ":" + std::to_string(line) + ":" + std::to_string(column);
  return file.empty() ? std::string("<unknown>") : file;
}

ConfigError::ConfigError(const Origin& where, const std::string& path, const std::string& msg)
    : Error(where.str() + ": " + (path.empty() ? std::string() : "key '" + path + "': ") + msg, kExitConfig) {}

// ---------------------------------------------------------------------------------------
// Node

Node Node::scalar(std::string text, Origin o, std::string path) {
  Node n;
  n.kind_ = Kind::Scalar;
  n.text_ = std::move(text);
  n.origin_ = std::move(o);
  n.path_ = std::move(path);
  return n;
}

Node Node::map(Origin o, std::string path) {
  Node n;
  n.kind_ = Kind::Map;
  n.origin_ = std::move(o);
  n.path_ = std::move(path);
  return n;
}

const Node* Node::find(const std::string& key) const {
  for (auto& kv : map_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

Node* Node::find(const std::string& key) {
  for (auto& kv : map_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const Node& Node::at(const std::string& key) const {
  if (kind_ != Kind::Map) fail("expected a map containing '" + key + "'");
  const Node* n = find(key);
  if (!n) throw ConfigError(origin_, path_, "missing required key '" + key + "'");
  return *n;
}

static std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

Node& Node::set(const std::string& key, Node value) {
  if (kind_ == Kind::Null) kind_ = Kind::Map;
  value.repath(join(path_, key));
  for (auto& kv : map_)
    if (kv.first == key) return kv.second = std::move(value);
  map_.emplace_back(key, std::move(value));
  return map_.back().second;
}

bool Node::erase(const std::string& key) {
  for (auto it = map_.begin(); it != map_.end(); ++it)
    if (it->first == key) {
      map_.erase(it);
      return true;
    }
  return false;
}

void Node::push(Node n) {
  if (kind_ == Kind::Null) kind_ = Kind::Seq;
  n.repath(path_ + "[" + std::to_string(seq_.size()) + "]");
  seq_.push_back(std::move(n));
}

void Node::repath(const std::string& path) {
  path_ = path;
  for (auto& kv : map_) kv.second.repath(join(path, kv.first));
  for (std::size_t i = 0; i < seq_.size(); ++i) seq_[i].repath(path + "[" + std::to_string(i) + "]");
}

void Node::retag(const Origin& o) {
  origin_ = o;
  for (auto& kv : map_) kv.second.retag(o);
  for (auto& it : seq_) it.retag(o);
}

void Node::fail(const std::string& msg) const { throw ConfigError(origin_, path_, msg); }

static bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  std::string t;
  for (char c : s)
    if (c != '_') t += c;  // 1_000_000 reads as a number
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(t.c_str(), &end, 0);
  if (errno || !end || *end) {
    // Allow integers written with an exponent, e.g. 1e6, when exact.
    char* e2 = nullptr;
    double d = std::strtod(t.c_str(), &e2);
    if (!e2 || *e2 || d != std::floor(d) || std::fabs(d) > 9.0e18) return false;
    v = (long long)d;
  }
  out = v;
  return true;
}

std::int64_t Node::as_int() const {
  if (kind_ != Kind::Scalar) fail("expected an integer");
  std::int64_t v;
  if (!parse_int(text_, v)) fail("expected an integer, got '" + text_ + "'");
  return v;
}

std::uint64_t Node::as_uint() const {
  std::int64_t v = as_int();
  if (v < 0) fail("expected a non-negative integer, got '" + text_ + "'");
  return std::uint64_t(v);
}

double Node::as_double() const {
  if (kind_ != Kind::Scalar) fail("expected a number");
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text_.c_str(), &end);
  if (errno || !end || *end || text_.empty() || !std::isfinite(v)) fail("expected a number, got '" + text_ + "'");
  return v;
}

bool Node::as_bool() const {
  if (kind_ == Kind::Scalar) {
    if (text_ == "true" || text_ == "yes" || text_ == "on") return true;
    if (text_ == "false" || text_ == "no" || text_ == "off") return false;
  }
  fail("expected true or false, got '" + text_ + "'");
}

const std::string& Node::as_string() const {
  if (kind_ != Kind::Scalar) fail("expected a string");
  return text_;
}

std::vector<std::uint64_t> Node::get_uint_list(const std::string& key) const {
  const Node& n = at(key);
  if (!n.is_seq()) n.fail("expected a list of integers");
  std::vector<std::uint64_t> out;
  for (auto& it : n.items()) out.push_back(it.as_uint());
  return out;
}

std::vector<std::string> Node::get_string_list(const std::string& key) const {
  const Node& n = at(key);
  if (!n.is_seq()) n.fail("expected a list of strings");
  std::vector<std::string> out;
  for (auto& it : n.items()) out.push_back(it.as_string());
  return out;
}

// ---------------------------------------------------------------------------------------
// YAML

// What a config file may ask of the loader. A YAML alias expands to a copy of its anchor, so a
// few lines can stand for billions of nodes; the budget turns that into an error naming the
// file instead of a run out of memory. A real scenario has a few thousand nodes and nests a
// dozen levels; data belongs in tensor files, not YAML.
constexpr std::size_t kMaxConfigBytes = 16u << 20;
constexpr unsigned kMaxConfigDepth = 64;
constexpr std::size_t kMaxConfigNodes = 1000000;

struct NodeBuilder {
  const std::string& file;

  Node build(const YAML::Node& y, const std::string& path, unsigned depth) {
    Origin o{file, y.Mark().line + 1, y.Mark().column + 1};
    if (depth > kMaxConfigDepth)
      throw ConfigError(o, path, "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
    Node n;
    n.origin_ = o;
    n.path_ = path;
    switch (y.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined: n.kind_ = Node::Kind::Null; break;
      case YAML::NodeType::Scalar:
        n.kind_ = Node::Kind::Scalar;
        n.text_ = y.Scalar();
        break;
      case YAML::NodeType::Sequence:
        n.kind_ = Node::Kind::Seq;
        for (std::size_t i = 0; i < y.size(); ++i)
          n.seq_.push_back(build(y[i], path + "[" + std::to_string(i) + "]", depth + 1));
        break;
      case YAML::NodeType::Map: build_map(y, n, path, depth); break;
    }
    return n;
  }

  void build_map(const YAML::Node& y, Node& n, const std::string& path, unsigned depth) {
    n.kind_ = Node::Kind::Map;
    std::unordered_set<std::string> seen;  // a map of many keys stays linear
    std::vector<YAML::Node> merges;        // the values of its merge keys (<<)
    for (auto it = y.begin(); it != y.end(); ++it) {
      std::string key = it->first.Scalar();
      Origin ko{file, it->first.Mark().line + 1, it->first.Mark().column + 1};
      // A second << too: one merge key, given a list of maps for more.
      if (!seen.insert(key).second) throw ConfigError(ko, join(path, key), "duplicate key");
      if (key == "<<") {
        merges.push_back(it->second);
        continue;
      }
      add(n, key, ko, it->second, path, depth);
    }
    for (const YAML::Node& m : merges) merge_keys(n, seen, m, path, depth);
  }

  // YAML's merge key: `<<: *base` (or a list of maps) gives the map the keys of `base` it does
  // not set itself (an earlier map of the list before a later one), as YAML 1.1 defines it. A
  // merged map's own << counts as its keys, after its others: anchors stack.
  void merge_keys(Node& n, std::unordered_set<std::string>& seen, const YAML::Node& m, const std::string& path,
                  unsigned depth) {
    const auto refuse = [&](const YAML::Node& at, const std::string& why) {
      throw ConfigError(Origin{file, at.Mark().line + 1, at.Mark().column + 1}, join(path, "<<"), why);
    };
    if (depth > kMaxConfigDepth) refuse(m, "merges nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
    if (!m.IsMap() && !m.IsSequence()) refuse(m, "a merge key (<<) takes a map or a list of maps");
    std::vector<YAML::Node> maps;
    if (m.IsMap()) maps.push_back(m);
    for (std::size_t i = 0; m.IsSequence() && i < m.size(); ++i) maps.push_back(m[i]);
    for (const YAML::Node& from : maps) {
      if (!from.IsMap()) refuse(from, "a merge key (<<) takes a map or a list of maps");
      std::vector<YAML::Node> inner;
      for (auto it = from.begin(); it != from.end(); ++it) {
        const std::string key = it->first.Scalar();
        if (key == "<<")
          inner.push_back(it->second);
        else if (seen.insert(key).second)
          add(n, key, Origin{file, it->first.Mark().line + 1, it->first.Mark().column + 1}, it->second, path, depth);
      }
      for (const YAML::Node& i : inner) merge_keys(n, seen, i, path, depth + 1);
    }
  }

  void add(Node& n, const std::string& key, const Origin& ko, const YAML::Node& value, const std::string& path,
           unsigned depth) {
    Node child = build(value, join(path, key), depth + 1);
    // Errors about a key's value point at the key: the line a user scans for.
    child.origin_ = ko;
    n.map_.emplace_back(key, std::move(child));
  }
};

// Counts the values a YAML text stands for, aliases expanded, from the parser's events, without
// expanding them: an alias adds the size its anchor's subtree was counted at. The count is the
// one NodeBuilder keeps (a node per value and item, map keys aside), so a file over the budget is
// refused in time linear in its text. Building a million nodes first took seconds under the
// sanitizers, past the fuzz run's limit for one input.
class ValueCounter : public YAML::EventHandler {
 public:
  explicit ValueCounter(const std::string& file) : file_(file) {}

  void OnDocumentStart(const YAML::Mark& m) override { start_ = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t anchor) override { leaf(m, anchor, 1, nullptr); }
  const YAML::Mark& start() const { return start_; }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    auto it = sizes_.find(anchor);
    leaf(m, 0, it == sizes_.end() ? 1 : it->second, nullptr);
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, const std::string& v) override {
    leaf(m, anchor, 1, &v);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(m, anchor, false);
  }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open(m, anchor, true);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    YAML::anchor_t anchor;
    bool map;
    std::size_t size = 1;      // this node and the values under it
    std::size_t children = 0;  // keys and values seen (a map alternates them)
    std::string key;           // a map's current key, for the error's path
  };

  bool is_key() const { return !stack_.empty() && stack_.back().map && stack_.back().children % 2 == 0; }

  void count(const YAML::Mark& m, std::size_t n) {
    if (is_key()) return;
    total_ += n;
    if (total_ > kMaxConfigNodes)
      throw ConfigError(Origin{file_, m.line + 1, m.column + 1}, path(),
                        "more than " + std::to_string(kMaxConfigNodes) +
                            " values (aliases count once per use); move bulk data to a tensor file");
  }
  void open(const YAML::Mark& m, YAML::anchor_t anchor, bool map) {
    count(m, 1);
    stack_.push_back(Frame{anchor, map, 1, 0, {}});
  }
  void leaf(const YAML::Mark& m, YAML::anchor_t anchor, std::size_t size, const std::string* text) {
    if (text && is_key()) stack_.back().key = *text;
    count(m, size);
    done(anchor, size);
  }
  void close() {
    const YAML::anchor_t anchor = stack_.back().anchor;
    const std::size_t size = stack_.back().size;
    stack_.pop_back();
    done(anchor, size);
  }
  void done(YAML::anchor_t anchor, std::size_t size) {
    if (anchor != YAML::NullAnchor) sizes_[anchor] = size;
    if (stack_.empty()) return;
    if (!is_key()) stack_.back().size += size;
    ++stack_.back().children;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : stack_) p = f.map ? join(p, f.key) : p + "[" + std::to_string(f.children) + "]";
    return p;
  }

  const std::string& file_;
  YAML::Mark start_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, std::size_t> sizes_;
  std::size_t total_ = 0;
};

// A second document in a config file (after ---) is refused where it starts: the parser would
// read the first one only, and the rest of the file would be silently left out. An empty one (a
// trailing ---) holds nothing to leave out.
class SecondDocument : public YAML::EventHandler {
 public:
  explicit SecondDocument(const std::string& file) : file_(file) {}
  void OnDocumentStart(const YAML::Mark& m) override { start_ = m; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { refuse(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { refuse(); }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    refuse();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    refuse();
  }
  void OnMapEnd() override {}
  const YAML::Mark& start() const { return start_; }

 private:
  void refuse() const {
    throw ConfigError(Origin{file_, start_.line + 1, start_.column + 1}, "",
                      "a second YAML document: a config file holds one (merge the two, or drop the ---)");
  }
  const std::string& file_;
  YAML::Mark start_;
};

// yaml-cpp reads a token that cannot start a document (a ',' outside brackets) as
// an empty document and leaves it unread: the next document starts at the same place, and so on
// for ever (a fuzz input hung here), while YAML::Load returns the first, empty one, and the rest
// of the file is silently lost. A document that starts where the last one did is refused there.
[[noreturn]] void refuse_unread(const std::string& text, const YAML::Mark& m, const std::string& file) {
  const auto at = static_cast<std::size_t>(m.pos);
  const unsigned char c = at < text.size() ? static_cast<unsigned char>(text[at]) : 0;
  const std::string what = c >= 0x21 && c < 0x7f ? "'" + std::string(1, static_cast<char>(c)) + "'" : "this byte";
  throw ConfigError(Origin{file, m.line + 1, m.column + 1}, "",
                    "YAML syntax error: " + what + " cannot start a value here (a ',' outside [ ] or { }?)");
}

Node from_yaml_text(const std::string& text, const std::string& file_name) {
  YAML::Node y;
  try {
    y = YAML::Load(text);
    std::istringstream in(text);
    ValueCounter counter(file_name);
    YAML::Parser parser(in);
    int last = parser.HandleNextDocument(counter) ? counter.start().pos : 0;
    SecondDocument second(file_name);
    while (parser.HandleNextDocument(second)) {
      if (second.start().pos <= last) refuse_unread(text, second.start(), file_name);
      last = second.start().pos;
    }
  } catch (const YAML::DeepRecursion& e) {
    Origin o{file_name, e.mark.line + 1, e.mark.column + 1};
    throw ConfigError(o, "", "nested deeper than " + std::to_string(kMaxConfigDepth) + " levels");
  } catch (const YAML::Exception& e) {
    Origin o{file_name, e.mark.line + 1, e.mark.column + 1};
    throw ConfigError(o, "", "YAML syntax error: " + e.msg);
  }
  NodeBuilder b{file_name};
  return b.build(y, "", 0);
}

// A config file is a regular file of bounded size: a directory, a FIFO or /dev/zero is named
// as what it is rather than read forever or parsed as empty.
Node load_file(const std::string& path, const std::string& root_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw ConfigError(Origin{path, 0, 0}, "", "cannot open file: " + ec.message());
  if (!fs::exists(st)) throw ConfigError(Origin{path, 0, 0}, "", "cannot open file: no such file");
  if (fs::is_directory(st)) throw ConfigError(Origin{path, 0, 0}, "", "is a directory, not a YAML file");
  if (!fs::is_regular_file(st)) throw ConfigError(Origin{path, 0, 0}, "", "is not a regular file");
  const auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxConfigBytes)
    throw ConfigError(Origin{path, 0, 0}, "",
                      "is " + std::to_string(size) + " bytes; a config file is at most " +
                          std::to_string(kMaxConfigBytes >> 20) + " MiB");
  std::ifstream f(path);
  if (!f) throw ConfigError(Origin{path, 0, 0}, "", std::string("cannot open file: ") + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  Node n = from_yaml_text(ss.str(), path);
  if (!root_path.empty()) n.repath(root_path);
  return n;
}

void merge(Node& base, const Node& over) {
  if (base.is_map() && over.is_map()) {
    // Keys found through an index: a map of many keys merges in linear time.
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < base.map_.size(); ++i) index.emplace(base.map_[i].first, i);
    for (auto& kv : over.entries()) {
      auto at = index.find(kv.first);
      if (at == index.end()) {
        index.emplace(kv.first, base.map_.size());
        base.map_.emplace_back(kv.first, kv.second);
        base.map_.back().second.repath(join(base.path_, kv.first));
        continue;
      }
      Node& b = base.map_[at->second].second;
      if (b.is_map() && kv.second.is_map())
        merge(b, kv.second);
      else {
        b = kv.second;
        b.repath(join(base.path_, kv.first));
      }
    }
    return;
  }
  std::string p = base.path();
  base = over;
  base.repath(p);
}

namespace {
// One component of a --set key: a key, then the list items it names ([i], as errors name them).
struct KeyStep {
  std::string key;
  std::vector<std::size_t> items;
};
KeyStep key_step(const std::string& part, const Origin& o, const std::string& key) {
  KeyStep st{part.substr(0, part.find('[')), {}};
  if (st.key.empty()) throw ConfigError(o, key, "empty key component");
  for (std::size_t at = st.key.size(); at < part.size();) {
    const std::size_t close = part.find(']', at);
    std::size_t i = 0;
    const char* first = part.data() + at + 1;
    const char* last = part.data() + (close == std::string::npos ? part.size() : close);
    const auto [end, ec] = std::from_chars(first, last, i);  // ec: not digits, or past 2^64
    if (part[at] != '[' || close == std::string::npos || close == at + 1 || ec != std::errc() || end != last)
      throw ConfigError(o, key, "'" + part + "': a key, then [N] for item N of the list it names");
    st.items.push_back(i);
    at = close + 1;
  }
  return st;
}
// The list items of a step, which must exist: --set changes an item, it does not add one.
Node* take_items(Node* n, const KeyStep& st, const Origin& o, const std::string& key) {
  for (std::size_t i : st.items) {
    if (!n || !n->is_seq())
      throw ConfigError(o, key, "'" + st.key + "' is not a list here: no item [" + std::to_string(i) + "] to set");
    if (i >= n->items().size())
      throw ConfigError(
          o, key,
          "'" + st.key + "' has " + std::to_string(n->items().size()) + " items: no [" + std::to_string(i) + "]");
    n = &n->items_mut()[i];
  }
  return n;
}
}  // namespace

void set_dotted(Node& root, const std::string& assignment) {
  auto eq = assignment.find('=');
  Origin o{"--set " + assignment, 0, 0};
  if (eq == std::string::npos || eq == 0) throw ConfigError(o, "", "expected --set dotted.key=value");
  std::string key = assignment.substr(0, eq);
  std::string value = assignment.substr(eq + 1);
  Node v = from_yaml_text(value, "--set " + assignment);
  // A --set value has no file line; every node in it gets the --set origin.
  v.retag(o);
  Node* cur = &root;
  for (std::size_t start = 0;;) {
    const auto dot = key.find('.', start);
    const bool last = dot == std::string::npos;
    const KeyStep st = key_step(key.substr(start, last ? std::string::npos : dot - start), o, key);
    Node* next = cur->find(st.key);
    if (!next && st.items.empty()) {  // a new key: the value, or a section on the way to it
      next = &cur->set(st.key, last ? v : Node::map(o, ""));
      if (last) return;
    }
    next = take_items(next, st, o, key);
    if (last) {  // merged into, or replaced
      if (next->is_map() && v.is_map()) return merge(*next, v);
      const std::string path = next->path();
      *next = v;
      return next->repath(path);
    }
    if (!next->is_map()) throw ConfigError(o, next->path(), "is not a section; cannot set '" + key + "'");
    cur = next;
    start = dot + 1;
  }
}

const Node* find_dotted(const Node& root, const std::string& key, const Origin& o) {
  const Node* n = &root;
  for (std::size_t start = 0; n;) {
    const auto dot = key.find('.', start);
    const KeyStep st = key_step(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start), o, key);
    n = n->is_map() ? n->find(st.key) : nullptr;
    for (std::size_t i : st.items) n = n && n->is_seq() && i < n->items().size() ? &n->items()[i] : nullptr;
    if (dot == std::string::npos) return n;
    start = dot + 1;
  }
  return nullptr;
}

static void dump_rec(const Node& n, int indent, bool origins, std::ostringstream& os) {
  std::string pad(indent, ' ');
  auto scalar_text = [](const Node& s) {
    const std::string& t = s.text();
    bool plain = !t.empty() && t.find_first_of(":#{}[],&*!|>'\"%@`\n\t\\") == std::string::npos && t.front() != ' ' &&
                 t.back() != ' ' && t.front() != '-';
    if (plain) return t;
    // A double-quoted YAML scalar, escaped so it reads back byte for byte.
    std::string q = "\"";
    for (char c : t) {
      if (c == '"' || c == '\\')
        q += '\\', q += c;
      else if (c == '\n')
        q += "\\n";
      else if (c == '\t')
        q += "\\t";
      else
        q += c;
    }
    return q + "\"";
  };
  auto origin_comment = [&](const Node& s) { return origins ? "  # " + s.origin().str() : std::string(); };
  if (n.is_map()) {
    for (auto& kv : n.entries()) {
      const Node& c = kv.second;
      if (c.is_scalar()) {
        os << pad << kv.first << ": " << scalar_text(c) << origin_comment(c) << "\n";
      } else if (c.is_null()) {
        os << pad << kv.first << ": ~\n";
      } else if (c.is_seq() && !c.items().empty() && c.items().front().is_scalar()) {
        os << pad << kv.first << ": [";
        for (std::size_t i = 0; i < c.items().size(); ++i) os << (i ? ", " : "") << scalar_text(c.items()[i]);
        os << "]" << origin_comment(c.items().front()) << "\n";
      } else if (c.is_seq() && c.items().empty()) {
        os << pad << kv.first << ": []\n";
      } else {
        os << pad << kv.first << ":\n";
        dump_rec(c, indent + 2, origins, os);
      }
    }
  } else if (n.is_seq()) {
    for (auto& it : n.items()) {
      if (it.is_scalar()) {
        os << pad << "- " << scalar_text(it) << origin_comment(it) << "\n";
      } else {
        std::ostringstream inner;
        dump_rec(it, indent + 2, origins, inner);
        std::string s = inner.str();
        // Put the first line after the dash.
        os << pad << "- " << s.substr(indent + 2);
      }
    }
  } else if (n.is_scalar()) {
    os << pad << scalar_text(n) << origin_comment(n) << "\n";
  }
}

std::string dump(const Node& n, bool with_origins) {
  std::ostringstream os;
  dump_rec(n, 0, with_origins, os);
  return os.str();
}

// ---------------------------------------------------------------------------------------
// Spec

Spec::Spec(std::string name, Type type, std::string doc) : name_(std::move(name)), type_(type), doc_(std::move(doc)) {}

Spec& Spec::section(const std::string& name, const std::string& doc) {
  if (Spec* existing = child_mut(name)) return *existing;
  children_.push_back(std::make_unique<Spec>(name, Type::Section, doc));
  return *children_.back();
}

Spec& Spec::object_list(const std::string& name, const std::string& doc) {
  children_.push_back(std::make_unique<Spec>(name, Type::ObjectList, doc));
  Spec& list = *children_.back();
  list.children_.push_back(std::make_unique<Spec>("[]", Type::Section, doc));
  return *list.children_.back();
}

Spec& Spec::param(const std::string& name, Type type, const std::string& doc) {
  children_.push_back(std::make_unique<Spec>(name, type, doc));
  return *children_.back();
}

const Spec* Spec::child(const std::string& name) const {
  for (auto& c : children_)
    if (c->name_ == name) return c.get();
  return nullptr;
}

// Levenshtein distance: the typos people make (a letter doubled, dropped, swapped for another)
// are one or two edits away from the key they meant.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// The key at this level closest to `name`, if close enough to be a typo of it (at most a third
// of its letters changed); "" otherwise. Ties go to the first declared.
std::string Spec::closest_child(const std::string& name) const {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(1, name.size() / 3) + 1;
  for (auto& c : children_) {
    const std::size_t d = edit_distance(name, c->name_);
    if (d < best_d) {
      best = c->name_;
      best_d = d;
    }
  }
  return best;
}

Spec* Spec::child_mut(const std::string& name) {
  for (auto& c : children_)
    if (c->name_ == name) return c.get();
  return nullptr;
}

std::string Spec::type_name() const {
  switch (type_) {
    case Type::Int: return "integer";
    case Type::Float: return "number";
    case Type::Bool: return "bool";
    case Type::String: return "string";
    case Type::Enum: return "one of";
    case Type::IntList: return "list of integers";
    case Type::StringList: return "list of strings";
    case Type::Section: return "section";
    case Type::ObjectList: return "list of sections";
  }
  return "?";
}

static std::string fmt_num(double v) {
  std::ostringstream os;
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    os << (long long)v;
  else
    os << v;
  return os.str();
}

void Spec::check_scalar(const Node& n, std::vector<std::string>& errors) const {
  auto err = [&](const std::string& m) { errors.push_back(ConfigError(n.origin(), n.path(), m).what()); };
  auto check_range = [&](double v) {
    if (min_ && v < *min_)
      err("value " + fmt_num(v) + " is below the minimum " + fmt_num(*min_));
    else if (max_ && v > *max_)
      err("value " + fmt_num(v) + " is above the maximum " + fmt_num(*max_));
  };
  try {
    switch (type_) {
      case Type::Int: {
        std::int64_t v = n.as_int();
        check_range(double(v));
        if (pow2_ && (v <= 0 || (v & (v - 1)))) err("must be a power of two, got " + n.text());
        break;
      }
      case Type::Float: check_range(n.as_double()); break;
      case Type::Bool: n.as_bool(); break;
      case Type::String: n.as_string(); break;
      case Type::Enum: {
        const std::string& s = n.as_string();
        bool ok = false;
        for (auto& c : choices_) ok |= (c == s);
        if (!ok) {
          std::string list;
          for (auto& c : choices_) list += (list.empty() ? "" : ", ") + c;
          err("'" + s + "' is not one of: " + list);
        }
        break;
      }
      default: break;
    }
  } catch (const ConfigError& e) {
    errors.push_back(e.what());
  }
}

void Spec::validate(Node& n, std::vector<std::string>& errors) const {
  auto err = [&](const Node& at, const std::string& m) {
    errors.push_back(ConfigError(at.origin(), at.path(), m).what());
  };
  switch (type_) {
    case Type::Section: {
      if (n.is_null()) n = Node::map(n.origin(), n.path());
      if (!n.is_map()) return err(n, "expected a section (a map of keys)");
      if (open_) return;
      // A key beginning with x- is the file's own, not the schema's (a place for YAML anchors to
      // merge elsewhere with <<): checked by no one, it is taken out.
      std::vector<std::string> own;
      for (auto& kv : n.entries())
        if (kv.first.rfind("x-", 0) == 0) own.push_back(kv.first);
      for (const std::string& k : own) n.erase(k);
      for (auto& kv : n.entries()) {
        if (!child(kv.first)) {
          std::string known;
          for (auto& c : children_) known += (known.empty() ? "" : ", ") + c->name_;
          const std::string near = closest_child(kv.first);
          err(kv.second, "unknown key '" + kv.first + "'" +
                             (!near.empty()   ? " (did you mean '" + near + "'?)"
                              : known.empty() ? ""
                                              : " (known keys here: " + known + ")"));
        }
      }
      for (auto& c : children_) {
        Node* v = n.find(c->name_);
        if (!v) {
          if (c->default_) {
            Node d = Node::scalar(*c->default_, Origin{"default", 0, 0}, "");
            if (c->type_ == Type::IntList || c->type_ == Type::StringList) d = from_yaml_text(*c->default_, "default");
            n.set(c->name_, d);
          } else if (c->type_ == Type::Section && !c->optional_) {
            Node& s = n.set(c->name_, Node::map(n.origin(), ""));
            c->validate(s, errors);
          } else if (!c->optional_ && c->type_ != Type::ObjectList) {
            err(n, "missing required key '" + c->name_ + "' (" + c->doc_ + ")");
          }
          continue;
        }
        c->validate(*v, errors);
      }
      return;
    }
    case Type::ObjectList: {
      if (n.is_null()) return;
      if (!n.is_seq()) return err(n, "expected a list");
      for (auto& it : n.items_mut()) children_.front()->validate(it, errors);
      return;
    }
    case Type::IntList:
    case Type::StringList: {
      if (!n.is_seq()) return err(n, std::string("expected a ") + type_name());
      for (auto& it : n.items()) {
        if (type_ == Type::IntList) {
          try {
            std::int64_t v = it.as_int();
            if (min_ && double(v) < *min_) err(it, "value " + it.text() + " is below the minimum " + fmt_num(*min_));
            if (max_ && double(v) > *max_) err(it, "value " + it.text() + " is above the maximum " + fmt_num(*max_));
          } catch (const ConfigError& e) {
            errors.push_back(e.what());
          }
        } else {
          if (!it.is_scalar())
            err(it, "expected a string");
          else if (!choices_.empty()) {
            bool ok = false;
            for (auto& c : choices_) ok |= (it.text() == c) || (it.text().rfind(c + ":", 0) == 0);
            if (!ok) err(it, "'" + it.text() + "' is not an allowed entry");
          }
        }
      }
      return;
    }
    default:
      if (!n.is_scalar()) return err(n, "expected a single " + type_name() + " value");
      check_scalar(n, errors);
  }
}

std::string Spec::markdown(const std::string& prefix) const {
  std::ostringstream os;
  std::string here = prefix.empty() ? name_ : (name_.empty() ? prefix : prefix + "." + name_);
  if (type_ == Type::Section || type_ == Type::ObjectList) {
    const Spec* body = this;
    if (type_ == Type::ObjectList) {
      here += "[]";
      body = children_.front().get();
    }
    bool has_params = false;
    for (auto& c : body->children_) has_params |= (c->type_ != Type::Section && c->type_ != Type::ObjectList);
    if (!here.empty()) {
      os << "\n### `" << here << "`\n\n" << doc_ << "\n";
      if (body->open_) os << "\nFree-form: the keys below it belong to a part not described here.\n";
    }
    if (has_params) {
      os << "\n| key | type | unit | range | default | meaning |\n|---|---|---|---|---|---|\n";
      for (auto& c : body->children_) {
        if (c->type_ == Type::Section || c->type_ == Type::ObjectList) continue;
        std::string type = c->type_name();
        if (c->type_ == Type::Enum || (!c->choices_.empty())) {
          std::string list;
          for (auto& ch : c->choices_) list += (list.empty() ? "" : ", ") + ch;
          type += " " + list;
        }
        std::string range;
        if (c->min_ && c->max_)
          range = fmt_num(*c->min_) + " .. " + fmt_num(*c->max_);
        else if (c->min_)
          range = ">= " + fmt_num(*c->min_);
        if (c->pow2_) range += (range.empty() ? "" : ", ") + std::string("power of 2");
        std::string def = c->default_ ? "`" + *c->default_ + "`" : (c->optional_ ? "(none)" : "required");
        os << "| `" << c->name_ << "` | " << type << " | " << c->unit_ << " | " << range << " | " << def << " | "
           << c->doc_ << " |\n";
      }
    }
    for (auto& c : body->children_)
      if (c->type_ == Type::Section || c->type_ == Type::ObjectList) os << c->markdown(here);
  }
  return os.str();
}

void validate_or_throw(const Spec& spec, Node& root) {
  std::vector<std::string> errors;
  spec.validate(root, errors);
  if (errors.empty()) return;
  std::string msg =
      "invalid configuration (" + std::to_string(errors.size()) + " problem" + (errors.size() > 1 ? "s" : "") + "):";
  // The first hundred are enough to act on; a generated file with thousands stays readable.
  const std::size_t shown = std::min<std::size_t>(errors.size(), 100);
  for (std::size_t i = 0; i < shown; ++i) msg += "\n  " + errors[i];
  if (shown < errors.size()) msg += "\n  ... and " + std::to_string(errors.size() - shown) + " more";
  throw Error(msg);
}

}  // namespace dvp::cfg
