// The bounded reader (src/config/json_text.h) and the limits parse_config adds: input size and
// nesting caps, duplicate keys, numbers beyond a double, short messages, includes, the run
// name's length and the memory guard over the whole run (docs/config.md, "Limits and
// guarantees of the reader"). The CLI side (exit 2, nothing written) is
// tests/config/reader_corpus.py.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/json_reader.h"
#include "config/json_text.h"
#include "temp_dir.h"

using nlohmann::json;
using steer::ConfigError;
namespace fs = std::filesystem;

namespace {

// the message of the ConfigError f throws ("" and a test failure when it throws none)
template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ConfigError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected ConfigError, nothing was thrown";
  return "";
}

std::string parse_error(const std::string& text) {
  return config_error([&] { steer::read_config_text(text, "t.json"); });
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// a small valid projectile experiment
json projectile() {
  return json::parse(R"({
    "name": "reader",
    "model": {"type": "projectile", "dim": 2},
    "simulation": {"dt": 0.01, "steps": 50},
    "initial_state": {"position": [0.0, 0.0], "velocity": [2.5, 1.0]},
    "loss": {"terminal": [{"state": "position.x", "target": 1.0}]},
    "variables": {"x0.velocity.x": {"lower": -10.0, "upper": 10.0}},
    "optimizer": {"method": "gd", "learning_rate": 0.1, "iterations": 2}
  })");
}

const fs::path kConfigs = fs::path(STEER_SOURCE_DIR) / "configs";

}  // namespace

// ---- nesting depth

TEST(ReaderTest, DepthUpToTheLimitIsRead) {
  const int d = steer::kMaxJsonDepth;
  // the root object is level 1: d − 1 more levels of arrays reach the limit exactly
  const std::string text =
      "{\"a\": " + std::string(d - 1, '[') + "1" + std::string(d - 1, ']') + "}";
  const json j = steer::read_config_text(text, "t.json");
  const json* p = &j["a"];
  int levels = 1;
  while (p->is_array()) p = &(*p)[0], ++levels;
  EXPECT_EQ(levels, d);
}

TEST(ReaderTest, DepthPastTheLimitNamesTheKeyAndTheLimit) {
  const int d = steer::kMaxJsonDepth;
  const std::string msg =
      parse_error("{\"description\": " + std::string(d, '[') + std::string(d, ']') + "}");
  EXPECT_EQ(msg.rfind("config: description[0]", 0), 0u) << msg;
  EXPECT_NE(msg.find("deeper than " + std::to_string(d)), std::string::npos) << msg;
}

// the inputs that overflowed the stack before the cap: refused by the parser, in far under a
// second, with stack use independent of the depth
TEST(ReaderTest, MillionNestedArraysAndHundredThousandObjectsAreRefusedQuickly) {
  const std::size_t n = 1000000;
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg =
      parse_error("{\"description\": " + std::string(n, '[') + std::string(n, ']') + "}");
  EXPECT_NE(msg.find("description"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 400u);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\": ";
  objects += "1" + std::string(100000, '}');
  msg = parse_error("{\"model\": {\"type\": \"projectile\", \"x\": " + objects + "}}");
  EXPECT_EQ(msg.rfind("config: model.x.a.a", 0), 0u) << msg;
  EXPECT_LT(seconds_since(t0), 2.0);
}

// ---- duplicate keys, numbers, syntax

TEST(ReaderTest, DuplicateKeyNamesItsPath) {
  const std::string msg =
      parse_error(R"({"model": {"type": "mass_spring", "stiffness": 1, "stiffness": 2}})");
  EXPECT_EQ(msg.rfind("config: model.stiffness: duplicate key", 0), 0u) << msg;
  // a whole section given twice
  EXPECT_EQ(parse_error(R"({"model": {"type": "projectile"}, "model": {"type": "articulated"}})")
                .rfind("config: model: duplicate key", 0),
            0u);
  // inside an array element
  EXPECT_EQ(parse_error(R"({"loss": {"terminal": [{}, {"state": "a", "state": "b"}]}})")
                .rfind("config: loss.terminal[1].state: duplicate key", 0),
            0u);
  // the same key in two different objects is fine
  EXPECT_NO_THROW(steer::read_config_text(R"({"a": {"k": 1}, "b": {"k": 1}})", "t.json"));
}

TEST(ReaderTest, NumberBeyondADoubleIsAConfigErrorAtItsKey) {
  std::string msg = parse_error(R"({"simulation": {"dt": 1e400}})");
  EXPECT_EQ(msg.rfind("config: simulation.dt: the number 1e400", 0), 0u) << msg;
  msg = parse_error(R"({"initial_state": {"velocity": [1, -1e309]}})");
  EXPECT_EQ(msg.rfind("config: initial_state.velocity[1]:", 0), 0u) << msg;
  // 400 digits: quoted as an excerpt
  msg = parse_error("{\"simulation\": {\"steps\": 1" + std::string(400, '0') + "}}");
  EXPECT_NE(msg.find("simulation.steps"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 300u) << msg;
  // the largest doubles are numbers
  EXPECT_NO_THROW(steer::read_config_text(
      R"({"a": 1.7976931348623157e308, "b": -1.7976931348623157e308, "c": 1e-400})", "t.json"));
}

TEST(ReaderTest, SyntaxErrorsSayNotValidJsonAndQuoteAnExcerpt) {
  std::string msg = parse_error(R"({"name": "x",)");
  EXPECT_NE(msg.find("'t.json' is not valid JSON"), std::string::npos) << msg;
  // an unterminated string of 10 MB: the parser's "last read" token is cut to an excerpt
  msg = parse_error("{\"name\": \"" + std::string(10000000, 'x'));
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos);
  EXPECT_LT(msg.size(), 600u) << msg.substr(0, 600);
  // comments are not JSON
  EXPECT_NE(parse_error("// c\n{}").find("not valid JSON"), std::string::npos);
}

// ---- messages

TEST(ReaderTest, ExcerptCutsAtACharacterBoundaryAndEscapesControls) {
  EXPECT_EQ(steer::excerpt("short"), "short");
  EXPECT_EQ(steer::excerpt(std::string(100, 'a')), std::string(60, 'a') + "…");
  // "é" is two bytes: a cut inside it moves back to before it
  EXPECT_EQ(steer::excerpt(std::string(59, 'a') + "é" + "b"), std::string(59, 'a') + "…");
  EXPECT_EQ(steer::excerpt("a\nb\x1b[31m"), "a\\nb\\u001b[31m");
}

TEST(ReaderTest, EveryConfigErrorIsShort) {
  const ConfigError e(std::string(10000000, 'm'));
  EXPECT_LE(std::string(e.what()).size(), steer::kMaxConfigErrorBytes);
  // a value echoed by a choice, an unknown key: excerpts
  json j = projectile();
  j["simulation"]["precision"] = std::string(1000000, 'f');
  std::string msg = config_error([&] { steer::parse_config(j); });
  EXPECT_NE(msg.find("simulation.precision"), std::string::npos);
  EXPECT_LT(msg.size(), 200u);
  j = projectile();
  j["simulation"][std::string(1000000, 'k')] = 1;
  msg = config_error([&] { steer::parse_config(j); });
  EXPECT_NE(msg.find("unknown key"), std::string::npos);
  EXPECT_LT(msg.size(), 600u);
  j = projectile();
  j["variables"]["x0." + std::string(1000000, 'v')] = json::object();
  msg = config_error([&] { steer::parse_config(j); });
  EXPECT_LT(msg.size(), 1000u);
}

// ---- the run name

TEST(ReaderTest, NameLengthIsCapped) {
  json j = projectile();
  j["name"] = std::string(steer::kMaxNameLength, 'n');
  EXPECT_NO_THROW(steer::parse_config(j));
  j["name"] = std::string(steer::kMaxNameLength + 1, 'n');
  std::string msg = config_error([&] { steer::parse_config(j); });
  EXPECT_EQ(msg.rfind("config: name: 101 characters, more than the limit of 100", 0), 0u) << msg;
  // 200 MB: refused from its length, without a scan or a copy into the message
  j["name"] = std::string(200000000, 'n');
  const auto t0 = std::chrono::steady_clock::now();
  msg = config_error([&] { steer::parse_config(j); });
  EXPECT_LT(seconds_since(t0), 5.0);  // the config's own copy (raw) is the cost
  EXPECT_NE(msg.find("name: 200000000 characters"), std::string::npos);
  EXPECT_LT(msg.size(), 400u);
}

// ---- files: size cap, devices, FIFOs, directories

TEST(ReaderTest, FileAtTheCapIsReadOneByteMoreIsNot) {
  steer::testing::TempDir d("steer_reader");
  const fs::path p = d.path / "c.json";
  write_file(p, std::string(1000, ' '));
  EXPECT_EQ(steer::read_bounded_file(p.string(), "config", nullptr, 1000).size(), 1000u);
  const std::string msg =
      config_error([&] { steer::read_bounded_file(p.string(), "config", nullptr, 999); });
  EXPECT_NE(msg.find("c.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("larger than the limit of 999 bytes"), std::string::npos) << msg;
}

TEST(ReaderTest, EndlessDeviceIsRefusedAtTheCap) {
  if (access("/dev/zero", R_OK) != 0) GTEST_SKIP() << "no /dev/zero";
  const std::string msg = config_error(
      [&] { steer::read_bounded_file("/dev/zero", "config", nullptr, std::size_t(1) << 20); });
  EXPECT_NE(msg.find("'/dev/zero' is larger than the limit of 1 MiB"), std::string::npos) << msg;
  // and at the default cap, through load_config
  const std::string full = config_error([&] { steer::load_config("/dev/zero"); });
  EXPECT_NE(full.find("16 MiB"), std::string::npos) << full;
}

// a FIFO nobody writes to: opening does not wait for a writer; it reads as empty
TEST(ReaderTest, FifoWithoutWriterDoesNotHang) {
  steer::testing::TempDir d("steer_reader");
  const fs::path p = d.path / "silent.fifo";
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  auto f = std::async(std::launch::async, [&] {
    try {
      steer::load_config(p.string());
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  });
  if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    std::cerr << "reading a FIFO without a writer did not return within 10 s\n";
    std::_Exit(1);  // the reading thread cannot be stopped
  }
  const std::string msg = f.get();
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;
}

TEST(ReaderTest, DirectoryAndMissingFileAreNamed) {
  steer::testing::TempDir d("steer_reader");
  std::string msg = config_error([&] { steer::load_config(d.path.string()); });
  EXPECT_NE(msg.find("directory"), std::string::npos) << msg;
  msg = config_error([&] { steer::load_config((d.path / "nope.json").string()); });
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nope.json"), std::string::npos) << msg;
}

// ---- model.include

TEST(ReaderTest, IncludeErrorsNameModelInclude) {
  steer::testing::TempDir d("steer_reader");
  const std::string arm = (kConfigs / "models" / "panda_arm.json").string();
  auto load = [&](const std::string& file, json j) {
    write_file(d.path / file, j.dump());
    return config_error([&] { steer::load_config((d.path / file).string()); });
  };
  // a model that takes no include: the key the user wrote, not the one expand_includes records
  json j = projectile();
  j["model"]["include"] = arm;
  std::string msg = load("projectile.json", j);
  EXPECT_EQ(msg.rfind("config: model.include: model projectile takes no include file", 0), 0u)
      << msg;
  EXPECT_EQ(msg.find("included_from"), std::string::npos) << msg;
  // the config itself, under its own name and under another (a hard link)
  json a = json::parse(std::ifstream(kConfigs / "panda.json"));
  a["model"]["include"] = "self.json";
  msg = load("self.json", a);
  EXPECT_NE(msg.find("model.include: 'self.json' is this config itself"), std::string::npos) << msg;
  fs::create_hard_link(d.path / "self.json", d.path / "alias.json");
  a["model"]["include"] = "alias.json";
  msg = load("self.json", a);
  EXPECT_NE(msg.find("model.include: 'alias.json' is this config itself"), std::string::npos)
      << msg;
  // another whole config; a fragment with an include of its own
  a["model"]["include"] = (kConfigs / "panda.json").string();
  EXPECT_NE(load("whole.json", a).find("is a whole config"), std::string::npos);
  write_file(d.path / "nested.frag", R"({"include": "other.frag", "gravity": 9.81})");
  a["model"]["include"] = "nested.frag";
  EXPECT_NE(load("nested.json", a).find("model.include: 'nested.frag' has an include of its own"),
            std::string::npos);
  // the include file gets the reader's caps: duplicates and depth
  write_file(d.path / "dup.frag", R"({"gravity": 9.81, "gravity": 9.81})");
  a["model"]["include"] = "dup.frag";
  msg = load("dup.json", a);
  EXPECT_EQ(msg.rfind("config: model.include: gravity: duplicate key", 0), 0u) << msg;
  EXPECT_NE(msg.find("dup.frag"), std::string::npos) << msg;
  write_file(d.path / "deep.frag", "{\"bodies\": " + std::string(1000000, '[') + "}");
  a["model"]["include"] = "deep.frag";
  EXPECT_EQ(load("deep.json", a).rfind("config: model.include: bodies[0]", 0), 0u);
  // the shipped include still works
  a["model"]["include"] = arm;
  write_file(d.path / "ok.json", a.dump());
  EXPECT_NO_THROW(steer::load_config((d.path / "ok.json").string()));
}

// ---- the memory guard

// every shipped config fits a machine with 4 GB of memory for the run (the estimate is printed)
TEST(ReaderTest, ShippedConfigsFitTheMemoryGuard) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kConfigs)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    SCOPED_TRACE(e.path().filename().string());
    steer::ExperimentConfig c;
    ASSERT_NO_THROW(c = steer::load_config(e.path().string()));
    const steer::MemoryEstimate m = steer::estimate_memory(c);
    std::cout << "[ memory ] " << e.path().filename().string() << ": " << m.total() / 1e9
              << " GB (batch " << m.batch / 1e9 << ", trajectory " << m.trajectory / 1e9
              << ", penetration " << m.penetration / 1e9 << ")\n";
    EXPECT_LT(m.total(), 4e9);
    ++n;
  }
  EXPECT_GE(n, 3);
}

// the recorded trajectory counts: 170 rollouts × 10⁶ steps of a 2-D projectile record
// 6.8·10⁸ numbers, ~45 GB with their float64 copy and CSV text (264 bytes a state; the batch
// arrays are ~11 GB)
TEST(ReaderTest, TrajectoryRecordingCountsInTheMemoryGuard) {
  json j = projectile();
  j["simulation"]["steps"] = 1000000;
  j["batch"] = {{"size", 170}};
  j["output"] = {{"trajectory_rollouts", 170}};
  j["validation"] = {{"enabled", false}};
  j["optimizer"] = {{"method", "none"}};
  j["simulation"]["memory_limit_gb"] = 1e6;
  const steer::MemoryEstimate m = steer::estimate_memory(steer::parse_config(j));
  EXPECT_GT(m.trajectory, 40e9);
  EXPECT_LT(m.trajectory, 60e9);
  EXPECT_GT(m.trajectory, 3 * m.batch);
  j["simulation"]["memory_limit_gb"] = 40;
  std::string msg = config_error([&] { steer::parse_config(j); });
  EXPECT_EQ(msg.rfind("config: output.trajectory_rollouts: the run needs about", 0), 0u) << msg;
  EXPECT_NE(msg.find("lower output.trajectory_rollouts or raise output.trajectory_stride"),
            std::string::npos)
      << msg;
  // recording every 100th state fits
  j["output"]["trajectory_stride"] = 100;
  EXPECT_NO_THROW(steer::parse_config(j));
  // so does recording one rollout
  j["output"] = {{"trajectory_rollouts", 1}};
  EXPECT_NO_THROW(steer::parse_config(j));
}

// validation at h/2 builds a second problem over 2T steps: it counts in the batch part
TEST(ReaderTest, ValidationCopiesCountInTheMemoryGuard) {
  json j = projectile();
  j["simulation"]["steps"] = 100000;
  j["batch"] = {{"size", 64}};
  j["output"] = {{"trajectory_rollouts", 0}};
  j["validation"] = {{"enabled", false}};
  const double without = steer::estimate_memory(steer::parse_config(j)).batch;
  j["validation"] = {{"enabled", true}, {"timestep_check", true}};
  const double with = steer::estimate_memory(steer::parse_config(j)).batch;
  // the h/2 problem holds 2T steps of controls: about twice the run's own problem
  EXPECT_GT(with, 2.5 * without);
}
