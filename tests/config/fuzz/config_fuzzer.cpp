// libFuzzer harness over the config reader and parser: the input bytes are a config file's
// text, read as `steer run` reads one (parse with the reader's caps, model.include relative to
// configs/, parse_config), then written back as the artifact's effective config. A ConfigError
// is the expected answer to a bad input (the CLI's exit code 2); any other exception, a crash,
// a sanitizer report, a message longer than the cap or a run past the time limit is a finding.
// Built and run by tests/config/fuzz/run_fuzzer.sh (ctest Reader.Fuzz, label slow).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "config/config.h"
#include "config/json_reader.h"

#ifndef STEER_FUZZ_CONFIG_DIR
#error "STEER_FUZZ_CONFIG_DIR: the configs folder model.include is resolved against"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json j = steer::read_config_text(text, "fuzz-input.json");
    j = steer::expand_includes(j, STEER_FUZZ_CONFIG_DIR);
    const steer::ExperimentConfig c = steer::parse_config(j);
    (void)c.to_json().dump();
  } catch (const steer::ConfigError& e) {
    const std::size_t n = std::strlen(e.what());
    if (n == 0 || n > steer::kMaxConfigErrorBytes) {
      std::fprintf(stderr, "config_fuzzer: a ConfigError message of %zu bytes\n", n);
      std::abort();
    }
  }
  return 0;
}
