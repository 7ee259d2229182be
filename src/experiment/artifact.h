// Writing a run's artifact folder atomically: everything is written into a hidden
// temporary folder next to the destination, flushed, then renamed into place, so a
// crash or a failure never leaves a half-written run behind.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace steer {

struct ArtifactFiles {
  nlohmann::json artifact;                                    // -> artifact.json
  std::vector<std::pair<std::string, std::string>> sidecars;  // (file name, contents)
};

// writes files into <out_dir>/<run_name>/ and returns the folder path. The files go into a
// hidden sibling .<run_name>.tmp-<host>-<pid> first; the finished folder is then published
// under the first free name of <run_name>, <run_name>-1, <run_name>-2, … by a rename that
// fails instead of replacing (renameat2 RENAME_NOREPLACE, or mkdir of the name and a rename
// onto the empty folder where the file system lacks it), so concurrent runs into one folder
// all land. Throws std::runtime_error on I/O failure, after removing the temporary folder.
std::string write_artifact(const std::string& out_dir, const std::string& run_name,
                           const ArtifactFiles& files);
// the same, calling before_publish(temporary folder) once the files are in it and before it is
// published (the other ranks' shards are written then); an exception from it removes the folder
std::string write_artifact(const std::string& out_dir, const std::string& run_name,
                           const ArtifactFiles& files,
                           const std::function<void(const std::string&)>& before_publish);

// Before any work: creates out_dir if needed and proves it is a writable folder (a probe file
// is created and removed), then removes the temporary folders that runs on this host left
// behind when they were killed (their process no longer exists). `key` names the option or
// config key the folder came from (--out, output.dir) in the ConfigError thrown otherwise.
void prepare_output_dir(const std::string& out_dir, const std::string& key);

// the temporary folder's suffix for this process, ".tmp-<host>-<pid>"
std::string temp_suffix();

// renames the folder `from` to `to` only when `to` does not exist (false when it does);
// throws std::runtime_error on any other failure
bool rename_no_replace(const std::string& from, const std::string& to);

// reads <folder>/artifact.json back
nlohmann::json read_artifact(const std::string& folder);

// writes one file atomically (temporary file in the same folder + rename)
void write_file_atomic(const std::string& path, const std::string& contents);

}  // namespace steer
