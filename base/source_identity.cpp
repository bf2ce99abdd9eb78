#include "base/source_identity.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "base/sha256.h"

namespace wb::identity {
namespace {

namespace fs = std::filesystem;

bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// C++'s punctuators, longest first, so that the first match is the maximal munch.
const std::vector<std::string>& punctuators() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> p = {"<=>", "<<=", ">>=", "->*", "...", "::", "->", "++", "--",
                                  "<<",  ">>",  "<=",  ">=",  "==",  "!=", "&&", "||", "+=",
                                  "-=",  "*=",  "/=",  "%=",  "&=",  "|=", "^=", ".*", "##"};
    std::stable_sort(p.begin(), p.end(),
                     [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    return p;
  }();
  return table;
}

// Removes backslash-newline pairs (translation phase 2).
std::string splice(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      std::size_t j = i + 1;
      if (j < text.size() && text[j] == '\r') ++j;
      if (j < text.size() && text[j] == '\n') {
        i = j;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

// A quoted literal starting at text[i] (the opening quote), escapes honoured.
std::size_t quoted_end(const std::string& text, std::size_t i) {
  const char quote = text[i];
  for (std::size_t j = i + 1; j < text.size(); ++j) {
    if (text[j] == '\\') {
      ++j;
    } else if (text[j] == quote || text[j] == '\n') {
      return j + 1;
    }
  }
  return text.size();
}

// A raw string literal R"delim( ... )delim" whose opening quote is at text[i].
std::size_t raw_end(const std::string& text, std::size_t i) {
  const std::size_t open = text.find('(', i);
  if (open == std::string::npos) return text.size();
  const std::string close = ")" + text.substr(i + 1, open - i - 1) + "\"";
  const std::size_t end = text.find(close, open);
  return end == std::string::npos ? text.size() : end + close.size();
}

}  // namespace

std::vector<std::vector<std::string>> tokenize(const std::string& raw) {
  const std::string text = splice(raw);
  std::vector<std::vector<std::string>> lines(1);
  // After `#include`, the rest of the line is one header-name token.
  auto in_include = [&] {
    const auto& l = lines.back();
    return l.size() == 2 && l[0] == "#" && l[1] == "include";
  };
  // The macro name of a #define: a function-like one is glued to its '(' (the space
  // between them is what tells the two kinds apart).
  auto naming_macro = [&] {
    const auto& l = lines.back();
    return l.size() == 2 && l[0] == "#" && l[1] == "define";
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      if (!lines.back().empty()) lines.emplace_back();
      ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == std::string::npos) i = text.size();
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 2;  // one space: the line goes on
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (in_include() && (c == '<' || c == '"')) {
      const std::size_t end = text.find(c == '<' ? '>' : '"', i + 1);
      const std::size_t stop = end == std::string::npos ? text.size() : end + 1;
      lines.back().push_back(text.substr(i, stop - i));
      i = stop;
    } else if (word_start(c)) {
      std::size_t j = i;
      while (j < text.size() && word_char(text[j])) ++j;
      const std::string word = text.substr(i, j - i);
      static const std::set<std::string> prefixes = {"u8", "u", "U", "L", "R", "u8R", "uR", "UR", "LR"};
      if (j < text.size() && (text[j] == '"' || text[j] == '\'') && prefixes.count(word)) {
        const bool raw_string = word.back() == 'R' && text[j] == '"';
        const std::size_t end = raw_string ? raw_end(text, j) : quoted_end(text, j);
        lines.back().push_back(text.substr(i, end - i));
        i = end;
      } else {
        if (naming_macro() && j < text.size() && text[j] == '(') {
          lines.back().push_back(word + "(");
          ++j;
        } else {
          lines.back().push_back(word);
        }
        i = j;
      }
    } else if (digit(c) || (c == '.' && i + 1 < text.size() && digit(text[i + 1]))) {
      std::size_t j = i + 1;
      while (j < text.size()) {
        const char d = text[j];
        if ((d == '+' || d == '-') && std::string("eEpP").find(text[j - 1]) != std::string::npos) {
          ++j;
        } else if (word_char(d) || d == '.' || (d == '\'' && j + 1 < text.size() && word_char(text[j + 1]))) {
          ++j;
        } else {
          break;
        }
      }
      lines.back().push_back(text.substr(i, j - i));
      i = j;
    } else if (c == '"' || c == '\'') {
      const std::size_t end = quoted_end(text, i);
      lines.back().push_back(text.substr(i, end - i));
      i = end;
    } else {
      std::string token(1, c);
      for (const std::string& p : punctuators())
        if (text.compare(i, p.size(), p) == 0) {
          token = p;
          break;
        }
      lines.back().push_back(token);
      i += token.size();
    }
  }
  if (lines.back().empty()) lines.pop_back();
  return lines;
}

namespace {

using Tokens = std::vector<std::string>;

// What is known of a macro in the configuration being hashed: defined (with its value
// when that is an integer literal) or undefined; a macro not in the table is unknown.
struct Macro {
  bool defined = false;
  std::optional<long long> value;
};

// A three-valued integer: nullopt where the configuration does not decide it.
using Value = std::optional<long long>;

std::optional<long long> integer_literal(std::string s) {
  while (!s.empty() && std::string("uUlL").find(s.back()) != std::string::npos) s.pop_back();
  if (s.empty() || !digit(s[0])) return std::nullopt;
  try {
    std::size_t used = 0;
    const long long v = std::stoll(s, &used, 0);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Evaluates an #if expression with unknowns: && and || short-circuit on a known
// operand, every other operator with an unknown operand is unknown.
class Condition {
 public:
  Condition(const Tokens& tokens, const std::map<std::string, Macro>& macros) : t_(tokens), macros_(macros) {}

  Value evaluate() {
    const Value v = ternary();
    if (pos_ != t_.size()) return std::nullopt;  // not understood: decide nothing
    return v;
  }

 private:
  bool take(const char* s) {
    if (pos_ < t_.size() && t_[pos_] == s) {
      ++pos_;
      return true;
    }
    return false;
  }

  Value ternary() {
    const Value c = logical_or();
    if (!take("?")) return c;
    const Value a = ternary();
    if (!take(":")) return std::nullopt;
    const Value b = ternary();
    if (!c) return a && b && *a == *b ? a : std::nullopt;
    return *c ? a : b;
  }

  Value logical_or() {
    return logical("||", true, [this] { return logical_and(); });
  }
  Value logical_and() {
    return logical("&&", false, [this] { return binary(0); });
  }

  // A chain of || (`decisive` true) or && (false) over operands that may be unknown: a
  // side known to be `decisive` settles it, even when the other is unknown; two known
  // sides that are not give !decisive; otherwise it is unknown.
  template <class Operand>
  Value logical(const char* op, bool decisive, Operand operand) {
    Value v = operand();
    while (take(op)) {
      const Value r = operand();
      auto settles = [decisive](const Value& x) { return x && (*x != 0) == decisive; };
      if (settles(v) || settles(r)) {
        v = decisive ? 1 : 0;
      } else if (v && r) {
        v = decisive ? 0 : 1;
      } else {
        v = std::nullopt;
      }
    }
    return v;
  }

  // Binary operators below && by precedence level, lowest first.
  Value binary(int level) {
    static const std::vector<std::vector<std::string>> levels = {
        {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
    if (level == static_cast<int>(levels.size())) return unary();
    Value v = binary(level + 1);
    for (;;) {
      std::string op;
      for (const std::string& o : levels[level])
        if (pos_ < t_.size() && t_[pos_] == o) op = o;
      if (op.empty()) return v;
      ++pos_;
      const Value r = binary(level + 1);
      if (!v || !r) {
        v = std::nullopt;
        continue;
      }
      const long long a = *v, b = *r;
      if (op == "|")
        v = a | b;
      else if (op == "^")
        v = a ^ b;
      else if (op == "&")
        v = a & b;
      else if (op == "==")
        v = a == b;
      else if (op == "!=")
        v = a != b;
      else if (op == "<")
        v = a < b;
      else if (op == ">")
        v = a > b;
      else if (op == "<=")
        v = a <= b;
      else if (op == ">=")
        v = a >= b;
      else if (op == "<<")
        v = a << b;
      else if (op == ">>")
        v = a >> b;
      else if (op == "+")
        v = a + b;
      else if (op == "-")
        v = a - b;
      else if (op == "*")
        v = a * b;
      else if (b == 0)
        v = std::nullopt;
      else if (op == "/")
        v = a / b;
      else
        v = a % b;
    }
  }

  Value unary() {
    if (take("!")) {
      const Value v = unary();
      return v ? Value(!*v) : std::nullopt;
    }
    if (take("-")) {
      const Value v = unary();
      return v ? Value(-*v) : std::nullopt;
    }
    if (take("+")) return unary();
    if (take("~")) {
      const Value v = unary();
      return v ? Value(~*v) : std::nullopt;
    }
    if (take("(")) {
      const Value v = ternary();
      if (!take(")")) return std::nullopt;
      return v;
    }
    if (pos_ >= t_.size()) return std::nullopt;
    const std::string token = t_[pos_++];
    if (token == "defined") {
      const bool paren = take("(");
      if (pos_ >= t_.size()) return std::nullopt;
      const std::string name = t_[pos_++];
      if (paren && !take(")")) return std::nullopt;
      const auto it = macros_.find(name);
      if (it == macros_.end()) return std::nullopt;
      return it->second.defined ? 1 : 0;
    }
    if (const auto literal = integer_literal(token)) return literal;
    if (word_start(token[0])) {
      if (pos_ < t_.size() && t_[pos_] == "(") return std::nullopt;  // a function-like macro: not evaluated
      const auto it = macros_.find(token);
      if (it == macros_.end()) return std::nullopt;
      if (!it->second.defined) return 0;  // an undefined identifier is 0 in #if
      return it->second.value;
    }
    return std::nullopt;
  }

  const Tokens& t_;
  const std::map<std::string, Macro>& macros_;
  std::size_t pos_ = 0;
};

// One #if group being read. `decided`: every condition so far was known, so only the
// branch taken (if any) is written and no directive; otherwise the group is written as
// it stands from its first unknown condition on.
struct Group {
  bool dead = false;    // inside a branch not taken: everything up to #endif is skipped
  bool decided = true;  // no unknown condition so far
  bool taken = false;   // a branch was known to be taken (the others are skipped)
  bool active = false;  // the current branch is written
  bool closed = false;  // undecided group whose later branches are known not taken
};

class Normaliser {
 public:
  explicit Normaliser(const Config& config) : config_(config) {
    for (const std::string& name : config.undefined) macros_[name] = Macro{};
  }

  Identity run(const std::string& file) {
    std::vector<std::string> pending{file};
    std::size_t next_header = 0;
    while (!pending.empty()) {
      const std::string unit = pending.front();
      pending.erase(pending.begin());
      if (seen_.count(unit)) continue;
      include(unit);
      // The sources beside the headers included so far, in the order they were met.
      for (; next_header < headers_.size(); ++next_header) {
        for (const char* ext : {".cpp", ".cu"}) {
          const std::string source = fs::path(headers_[next_header]).replace_extension(ext).generic_string();
          if (!seen_.count(source) && fs::is_regular_file(config_.root / source)) pending.push_back(source);
        }
      }
    }
    // Each file's text is hashed on its own and the hashes in sorted order, so that the
    // order of includes (which a header's new path can change, as include sorting
    // follows paths) does not count; each file's text keeps the place of its includes.
    Identity id;
    id.files = files_;
    std::vector<std::string> hashes;
    for (const std::string& f : files_) {
      hashes.push_back(sha256_hex(texts_[f]));
      id.normalised += "@file " + hashes.back() + " (" + f + ")\n" + texts_[f];
    }
    std::sort(hashes.begin(), hashes.end());
    std::string all = std::string(kScheme) + "\n";
    for (const std::string& h : hashes) all += h + "\n";
    id.hash = sha256_hex(all);
    return id;
  }

 private:
  static bool under_any(const std::string& rel, const std::vector<std::string>& prefixes) {
    for (const std::string& prefix : prefixes)
      if (rel.compare(0, prefix.size(), prefix) == 0) return true;
    return false;
  }

  // Whether lines are written here: every open group's current branch is; with
  // `enclosing`, the innermost group is left out (its own directives are being read).
  bool writing(bool enclosing = false) const {
    const std::size_t n = groups_.size() - (enclosing && !groups_.empty() ? 1 : 0);
    for (std::size_t i = 0; i < n; ++i)
      if (groups_[i].dead || !groups_[i].active) return false;
    return true;
  }

  bool certain() const {
    for (const Group& g : groups_)
      if (!g.decided) return false;
    return true;
  }

  // A directive: a line of its own.
  void write(const Tokens& tokens) {
    std::string& out = out_();
    if (!out.empty() && out.back() != '\n') out += '\n';
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i) out += ' ';
      out += tokens[i];
    }
    out += '\n';
  }

  // Code: where the source breaks its lines does not count; the text breaks after each
  // ';', '{' and '}' instead, only to be readable.
  void write_code(const Tokens& tokens) {
    std::string& out = out_();
    for (const std::string& t : tokens) {
      if (!out.empty() && out.back() != '\n') out += ' ';
      out += t;
      if (t == ";" || t == "{" || t == "}") out += '\n';
    }
  }

  // Where a quoted include names a project file: beside the including file, then at the
  // repository's root (the build's include path). Empty when neither exists.
  std::string resolve(const std::string& from, const std::string& name) const {
    const fs::path beside = (fs::path(from).parent_path() / name).lexically_normal();
    if (fs::is_regular_file(config_.root / beside)) return beside.generic_string();
    const fs::path top = fs::path(name).lexically_normal();
    if (fs::is_regular_file(config_.root / top)) return top.generic_string();
    return "";
  }

  void include(const std::string& rel) {
    if (seen_.count(rel)) return;
    seen_.insert(rel);
    files_.push_back(rel);
    std::stringstream text;
    if (const auto sub = config_.substitutes.find(rel); sub != config_.substitutes.end()) {
      text << sub->second;
    } else {
      std::ifstream in(config_.root / rel, std::ios::binary);
      if (!in) throw std::runtime_error("identity: cannot read " + (config_.root / rel).string());
      text << in.rdbuf();
    }
    const std::size_t depth = groups_.size();
    reading_.push_back(rel);
    for (const Tokens& line : tokenize(text.str())) {
      if (line[0] == "#" && line.size() > 1) {
        directive(rel, line);
      } else if (writing()) {
        write_code(line);
      }
    }
    reading_.pop_back();
    if (groups_.size() != depth) throw std::runtime_error("identity: unbalanced #if in " + rel);
  }

  void directive(const std::string& rel, const Tokens& line) {
    const std::string& name = line[1];
    const Tokens rest(line.begin() + 2, line.end());
    if (name == "if" || name == "ifdef" || name == "ifndef") {
      Group g;
      if (!writing()) {
        g.dead = true;
        groups_.push_back(g);
        return;
      }
      Value v;
      if (name == "if") {
        v = Condition(rest, macros_).evaluate();
      } else {
        const auto it = rest.empty() ? macros_.end() : macros_.find(rest[0]);
        if (it != macros_.end()) v = (it->second.defined == (name == "ifdef")) ? 1 : 0;
      }
      if (v) {
        g.taken = g.active = *v != 0;
      } else {
        g.decided = false;
        g.active = true;
        write(line);
      }
      groups_.push_back(g);
    } else if (name == "elif" || name == "else") {
      if (groups_.empty()) throw std::runtime_error("identity: #" + name + " without #if in " + rel);
      Group& g = groups_.back();
      if (g.dead) return;
      const Value v = name == "else" ? Value(1) : Condition(rest, macros_).evaluate();
      if (g.decided) {
        if (g.taken) {
          g.active = false;
        } else if (v) {
          g.taken = g.active = *v != 0;
        } else {  // the first unknown condition: the group is written from here, as an #if
          g.decided = false;
          g.active = true;
          Tokens opened = line;
          opened[1] = "if";
          if (writing(true)) write(opened);
        }
      } else if (g.closed) {
        g.active = false;
      } else {
        const bool outer = writing(true);
        if (v && *v == 0) {  // a branch known not taken: left out, directive and all
          g.active = false;
        } else if (v) {  // known taken (#else, or #elif 1): the branches after it are not
          g.active = g.closed = true;
          if (outer) write({"#", "else"});
        } else {
          g.active = true;
          if (outer) write(line);
        }
      }
    } else if (name == "endif") {
      if (groups_.empty()) throw std::runtime_error("identity: #endif without #if in " + rel);
      const Group g = groups_.back();
      groups_.pop_back();
      if (!g.dead && !g.decided && writing()) write(line);
    } else if (!writing()) {
      return;
    } else if (name == "include") {
      const std::string target = rest.empty() ? "" : rest[0];
      if (target.size() > 2 && target.front() == '"') {
        const std::string path = resolve(rel, target.substr(1, target.size() - 2));
        if (!path.empty()) {
          if (under_any(path, config_.excluded)) return;
          const std::string ext = fs::path(path).extension().string();
          if ((ext == ".h" || ext == ".cuh" || ext == ".hpp") && under_any(path, config_.code_rooms))
            headers_.push_back(path);
          write({"#", "include", "@project"});  // where it was included, not which path
          include(path);
          return;
        }
      }
      write(line);
    } else if (name == "pragma" && rest.size() == 1 && rest[0] == "once") {
      return;
    } else {
      if ((name == "define" || name == "undef") && rest.size() >= 1) track(name, rest);
      write(line);
    }
  }

  void track(const std::string& directive, const Tokens& rest) {
    std::string name = rest[0];
    const bool function_like = name.back() == '(';
    if (function_like) name.pop_back();
    if (!certain()) {
      macros_.erase(name);  // defined or not depending on an undecided condition
      return;
    }
    Macro m;
    m.defined = directive == "define";
    // Only an object-like macro whose body is one integer literal has a value in #if.
    if (m.defined && !function_like && rest.size() == 2) m.value = integer_literal(rest[1]);
    macros_[name] = m;
  }

  const Config& config_;
  std::map<std::string, Macro> macros_;
  std::vector<Group> groups_;
  std::set<std::string> seen_;
  std::vector<std::string> files_;
  std::vector<std::string> headers_;
  std::map<std::string, std::string> texts_;  // file -> its normalised text
  std::vector<std::string> reading_;          // the files being read, innermost last

  std::string& out_() { return texts_[reading_.back()]; }
};

}  // namespace

Identity of(const std::string& file, const Config& config) { return Normaliser(config).run(file); }

}  // namespace wb::identity
