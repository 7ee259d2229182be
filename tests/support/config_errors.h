// The check the config tests share: parsing a config must fail with ConfigError (the CLI's
// exit code 2), and the message must contain every needle: the offending key's path, the
// accepted range, the value seen.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/json_reader.h"

namespace steer::testing {

inline void expect_config_error(const nlohmann::json& j, const std::vector<std::string>& needles) {
  try {
    parse_config(j);
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    for (const auto& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "message: " << msg << "\nmissing: " << n;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ConfigError, got another exception: " << e.what()
                  << "\nconfig: " << j.dump();
    return;
  }
  ADD_FAILURE() << "expected ConfigError, parse succeeded for config: " << j.dump();
}

}  // namespace steer::testing
