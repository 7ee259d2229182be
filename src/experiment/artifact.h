// Writing a run's artifact folder atomically: everything is written into a hidden
// temporary folder next to the destination, flushed, then renamed into place, so a
// crash or a failure never leaves a half-written run behind.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace steer {

struct ArtifactFiles {
  nlohmann::json artifact;                                 // -> artifact.json
  std::vector<std::pair<std::string, std::string>> sidecars;  // (file name, contents)
};

// writes files into <out_dir>/<run_name>/ (created atomically); returns the folder path.
// If the folder exists a numeric suffix is added. Throws std::runtime_error on I/O failure,
// after removing the temporary folder.
std::string write_artifact(const std::string& out_dir, const std::string& run_name, const ArtifactFiles& files);

// reads <folder>/artifact.json back
nlohmann::json read_artifact(const std::string& folder);

// writes one file atomically (temporary file in the same folder + rename)
void write_file_atomic(const std::string& path, const std::string& contents);

}  // namespace steer
