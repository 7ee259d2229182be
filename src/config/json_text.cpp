#include "config/json_text.h"

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/json_reader.h"

namespace steer {

namespace {

// a file name in a message: long paths keep their head and their tail (the file's own name)
std::string shown_path(const std::string& p) {
  if (p.size() <= 160) return excerpt(p, 160);
  return excerpt(p.substr(0, 60), 60) + "…" + excerpt(p.substr(p.size() - 90), 90);
}

std::string limit_text(std::size_t max_bytes) {
  std::string s = std::to_string(max_bytes) + " bytes";
  if (max_bytes % (std::size_t(1) << 20) == 0)
    s = std::to_string(max_bytes >> 20) + " MiB (" + s + ")";
  return s;
}

// closes the descriptor on every path out of read_bounded_file
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_bounded_file(const std::string& path, const std::string& what, FileIdentity* id,
                              std::size_t max_bytes) {
  const std::string shown = "'" + shown_path(path) + "'";
  Fd f;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, possibly forever
  do {
    f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  } while (f.fd < 0 && errno == EINTR);
  if (f.fd < 0) throw ConfigError(what + ": cannot open " + shown + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    throw ConfigError(what + ": cannot read " + shown + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw ConfigError(what + ": cannot open " + shown + ": it is a directory, not a JSON file");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
    throw ConfigError(what + ": cannot open " + shown +
                      ": not a regular file, pipe or character device");
  if (id) *id = FileIdentity{st.st_dev, st.st_ino, true};
  const std::string too_large = what + ": " + shown + " is larger than the limit of " +
                                limit_text(max_bytes) + " for a config file";
  if (S_ISREG(st.st_mode) && st.st_size > 0 && std::size_t(st.st_size) > max_bytes)
    throw ConfigError(too_large);
  // reads block from here on (a pipe whose writer is slow is waited for, not read as empty)
  const int flags = ::fcntl(f.fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  std::vector<char> buf(std::size_t(1) << 16);
  for (;;) {
    const ssize_t n = ::read(f.fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ConfigError(what + ": cannot read " + shown + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    // at most max_bytes + 1 bytes are ever held: one byte past the limit proves it too large
    if (text.size() + std::size_t(n) > max_bytes) throw ConfigError(too_large);
    text.append(buf.data(), std::size_t(n));
  }
  return text;
}

namespace {

using json = nlohmann::json;

// Builds the tree from nlohmann's SAX events with an explicit stack of open containers, so
// that neither the parse nor the tree it leaves needs stack depth proportional to the input;
// refuses a level past max_depth and a key already present in its object. The first error
// stops the parse (the handler returns false) and is kept for the caller.
class BoundedSax {
 public:
  BoundedSax(json& root, int max_depth) : root_(root), max_depth_(max_depth) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return put(json(v)); }
  bool string(json::string_t& v) { return put(json(std::move(v))); }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    Frame& f = stack_.back();
    auto& obj = f.node->get_ref<json::object_t&>();
    auto ins = obj.emplace(k, nullptr);
    f.key = std::move(k);
    f.has_key = true;
    if (!ins.second)
      return fail(
          path(),
          "duplicate key: given twice in one object (JSON leaves which one counts undefined)");
    slot_ = &ins.first->second;
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string& last_token, const Exception& ex) {
    // nlohmann's text: "[json.exception.<kind>.<id>] <message>"; the token it quotes is cut to an
    // excerpt
    std::string msg = ex.what();
    if (!msg.empty() && msg[0] == '[') {
      const std::size_t close_bracket = msg.find("] ");
      if (close_bracket != std::string::npos) msg = msg.substr(close_bracket + 2);
    }
    const std::string tail = "; last read: '";
    const std::size_t at = msg.find(tail);
    if (at != std::string::npos) msg = msg.substr(0, at) + tail + excerpt(last_token) + "'";
    if (ex.id == 406) {
      // out_of_range.406: a number literal beyond the range of a double (1e400)
      overflow_ = true;
      msg = "the number " + excerpt(last_token) +
            " is beyond the range of a double (magnitude up to 1.8e308)";
    }
    return fail(path(), excerpt(msg, 300));
  }

  bool failed() const { return !error_.empty(); }
  bool overflow() const { return overflow_; }
  const std::string& error() const { return error_; }
  const std::string& error_path() const { return error_path_; }

 private:
  struct Frame {
    json* node;
    std::string key;  // objects: the key whose value is being read
    bool has_key = false;
    std::size_t count = 0;  // arrays: elements completed (the index of the one being read)
  };

  // the key path of the value being read, e.g. "model.bodies[2].joint"
  std::string path() const {
    std::string p;
    for (const Frame& f : stack_) {
      if (f.node->is_object()) {
        if (!f.has_key) break;
        p += (p.empty() ? "" : ".") + f.key;
      } else {
        p += "[" + std::to_string(f.count) + "]";
      }
      if (p.size() > 400) break;  // the message shows an excerpt anyway
    }
    return p;
  }

  bool fail(const std::string& where, const std::string& what) {
    if (error_.empty()) {
      error_path_ = where;
      error_ = what;
    }
    return false;
  }

  // the place the next value goes: the root, the array's next element, or the object's key slot
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.node->is_array()) {
      auto& arr = f.node->get_ref<json::array_t&>();
      arr.push_back(std::move(v));
      return &arr.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  // a finished value: an array's element count moves on
  void completed() {
    if (!stack_.empty() && stack_.back().node->is_array()) ++stack_.back().count;
  }

  bool put(json&& v) {
    place(std::move(v));
    completed();
    return true;
  }

  bool open(json::value_t t) {
    if (int(stack_.size()) >= max_depth_)
      return fail(path(), "nested deeper than " + std::to_string(max_depth_) +
                              " levels of objects and arrays (the reader's limit)");
    json* node = place(json(t));
    stack_.push_back(Frame{node, {}, false, 0});
    return true;
  }

  bool close() {
    stack_.pop_back();
    completed();
    return true;
  }

  json& root_;
  int max_depth_;
  std::vector<Frame> stack_;
  json* slot_ = nullptr;
  std::string error_, error_path_;
  bool overflow_ = false;
};

}  // namespace

json parse_json_text(const std::string& text, const std::string& what, const std::string& source,
                     int max_depth) {
  json root;
  BoundedSax sax(root, max_depth);
  bool ok = false;
  try {
    ok = json::sax_parse(text, &sax);
  } catch (const json::exception& e) {
    // the handler asks for no exceptions; this is a guard for a version that throws anyway
    throw ConfigError(what + ": '" + shown_path(source) +
                      "' is not valid JSON: " + excerpt(e.what(), 300));
  }
  if (ok && !sax.failed()) return root;
  const std::string in = " (in '" + shown_path(source) + "')";
  if (!sax.failed()) throw ConfigError(what + ": '" + shown_path(source) + "' is not valid JSON");
  const std::string where = sax.error_path().empty() ? "(root)" : excerpt(sax.error_path(), 160);
  // a syntax error names the file and says so in the words the tests and users look for;
  // the key path tells where the parser was
  const bool syntax = sax.error().rfind("duplicate key", 0) != 0 &&
                      sax.error().rfind("nested deeper", 0) != 0 && !sax.overflow();
  if (syntax)
    throw ConfigError(what + ": '" + shown_path(source) + "' is not valid JSON: " + sax.error() +
                      (sax.error_path().empty() ? std::string() : " (reading " + where + ")"));
  if (what == "config") throw ConfigError("config: " + where + ": " + sax.error());
  throw ConfigError(what + ": " + where + ": " + sax.error() + in);
}

}  // namespace steer
