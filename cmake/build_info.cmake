# `steer --version` (apps/steer/build_info.h): the commit is read when CMake configures, into a
# source generated for the CLI alone (configure_file rewrites it only when the commit changed),
# so a new commit recompiles that one file and relinks the CLI, nothing else. The build
# configures itself again after a commit, checkout or reset: HEAD and its reflog, which git
# writes on each of them, are configure dependencies. Outside a git checkout (a source
# archive) the commit is "unknown".
set(STEER_GIT_COMMIT unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  # steer's own checkout only, not a repository the source folder happens to sit in
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --show-toplevel
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE steer_git_top
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(REAL_PATH "${PROJECT_SOURCE_DIR}" steer_source_real)
  if(steer_git_top)
    file(REAL_PATH "${steer_git_top}" steer_git_top)
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} RESULT_VARIABLE steer_git_rc
                  OUTPUT_VARIABLE steer_git_out ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(steer_git_top STREQUAL steer_source_real AND steer_git_rc EQUAL 0 AND steer_git_out MATCHES "^[0-9a-f]+$")
    set(STEER_GIT_COMMIT ${steer_git_out})
    foreach(what HEAD logs/HEAD)
      # relative to the source folder, or absolute (a worktree's files are in the main checkout)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --git-path ${what}
                      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE steer_git_path
                      ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      get_filename_component(steer_git_path "${steer_git_path}" ABSOLUTE BASE_DIR ${PROJECT_SOURCE_DIR})
      if(EXISTS "${steer_git_path}")
        set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${steer_git_path}")
      endif()
    endforeach()
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/apps/steer/build_info.cpp.in ${PROJECT_BINARY_DIR}/apps/steer/build_info.cpp @ONLY)
target_sources(steer_cli PRIVATE ${PROJECT_SOURCE_DIR}/apps/steer/version.cpp ${PROJECT_BINARY_DIR}/apps/steer/build_info.cpp)
target_include_directories(steer_cli PRIVATE ${PROJECT_SOURCE_DIR}/apps/steer)
message(STATUS "steer: --version reports commit ${STEER_GIT_COMMIT}")
