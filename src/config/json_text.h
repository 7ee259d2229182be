// Bounded reading of config files and JSON text: a size cap on every file read, a nesting
// cap enforced while parsing, duplicate keys refused, and every parser error turned into a
// ConfigError (the CLI's exit code 2) naming the key path where the parser knows it.
// docs/config.md, "Limits and guarantees of the reader", states these limits for users.
#pragma once

#include <cstddef>
#include <string>

#include <sys/types.h>

#include <nlohmann/json.hpp>

namespace steer {

// the largest config or include file read [bytes]: 16 MiB holds a config 100 times larger than
// the largest shipped one, and its parsed tree (up to ~25 bytes of tree per byte of text for
// arrays of empty objects) stays well under a gigabyte
constexpr std::size_t kMaxConfigBytes = std::size_t(16) << 20;
// the deepest nesting of objects and arrays accepted; the shipped configs nest 6 levels. The
// parser itself is iterative, but copying, comparing and writing a JSON value recurse once per
// level, so the cap keeps every later pass's stack use bounded (64 frames)
constexpr int kMaxJsonDepth = 64;

// where a file was found: its device and inode, to recognize one file under two names
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  bool known = false;
  bool same(const FileIdentity& o) const {
    return known && o.known && dev == o.dev && ino == o.ino;
  }
};

// Reads at most max_bytes of path. Regular files, pipes/FIFOs and character devices are read;
// a directory (or anything else that is not one of those) is refused. The file is opened
// non-blocking so that opening a FIFO without a writer returns at once (it then reads as
// empty); reads then block as usual. More than max_bytes (a device such as /dev/zero, a FIFO
// fed forever) is refused after max_bytes + 1 bytes. Errors are ConfigError "<what>: ...",
// naming the file (an excerpt of a long path) and the limit.
std::string read_bounded_file(const std::string& path, const std::string& what,
                              FileIdentity* id = nullptr, std::size_t max_bytes = kMaxConfigBytes);

// Parses JSON text (what: the prefix of messages, e.g. "config"; source: the file name for
// messages). Nesting deeper than max_depth, a key given twice in one object, invalid JSON and
// a number beyond the range of a double are ConfigError naming the key path where known.
// Stack use does not grow with the input: nlohmann's parser keeps its state on the heap and
// the tree is built here by an explicit stack.
nlohmann::json parse_json_text(const std::string& text, const std::string& what,
                               const std::string& source, int max_depth = kMaxJsonDepth);

}  // namespace steer
