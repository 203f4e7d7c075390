// The fuzz targets' C helpers. This file is compiled without libFuzzer's coverage (SwiftPM's
// toolset gives C targets no fuzzer flags; scripts/fuzz compiles it with plain clang), so nothing
// here reaches libFuzzer's table of compared values: the budget's clock readings are compared
// here, where they cannot steer mutations (a run with a fixed seed is the same on every try).
#ifndef COURIER_LIBFUZZER_H
#define COURIER_LIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver, for a target whose `main` is its own (SwiftPM names an executable's entry
// point itself): it parses libFuzzer's flags and runs `callback` on every input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

// The CPU time this thread has used, in nanoseconds.
uint64_t courier_fuzz_thread_cpu_ns(void);

// 1 when this thread has used more than `budget_ns` of CPU since `start` (a value of
// courier_fuzz_thread_cpu_ns), else 0.
int courier_fuzz_cpu_over(uint64_t start, uint64_t budget_ns);

#endif
