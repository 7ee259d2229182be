# The bounded config reader (issue 22, docs/config.md "Limits and guarantees of the reader").
# reader_test: the reader's caps and messages, the include rules, the memory guard (GoogleTest)
steer_test(reader_test fast)

find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  # the CLI on every malformed config of tests/data/malformed (manifest.tsv) and on the big and
  # endless inputs made at run time: exit 2, the key on stderr, stderr < 2 KB, nothing written
  add_test(NAME Reader.MalformedCorpus
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/reader_corpus.py
                   --steer $<TARGET_FILE:steer_cli> --corpus ${CMAKE_CURRENT_SOURCE_DIR}/data/malformed)
  set_tests_properties(Reader.MalformedCorpus PROPERTIES LABELS fast TIMEOUT 600)
endif()

# libFuzzer over the reader and parser for 60 s (tests/fuzz/run_fuzzer.sh builds it with clang
# against the built library); skipped (exit 77) without clang. STEER_FUZZ_SECONDS sets the time.
set(STEER_FUZZ_SECONDS 60 CACHE STRING "seconds the config fuzzer runs under ctest")
set(steer_fuzz_link)
if(STEER_WITH_CUDA AND TARGET CUDA::cudart)
  set(steer_fuzz_link $<TARGET_FILE:CUDA::cudart>)
endif()
add_test(NAME Reader.Fuzz
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzzer.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:steer>
                 ${CMAKE_CURRENT_BINARY_DIR}/fuzz ${STEER_FUZZ_SECONDS} ${steer_fuzz_link})
set_tests_properties(Reader.Fuzz PROPERTIES LABELS slow SKIP_RETURN_CODE 77 TIMEOUT 900)
