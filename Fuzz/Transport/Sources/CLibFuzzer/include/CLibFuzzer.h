#ifndef COURIER_LIBFUZZER_H
#define COURIER_LIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver, for a target whose `main` is its own (SwiftPM names an executable's entry
// point itself): it parses libFuzzer's flags and runs `callback` on every input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
