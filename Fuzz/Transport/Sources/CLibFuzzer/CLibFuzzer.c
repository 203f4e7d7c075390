// Declarations only: libFuzzer is linked by -sanitize=fuzzer (see CLibFuzzer.h).
