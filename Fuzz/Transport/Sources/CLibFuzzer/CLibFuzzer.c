// Built without libFuzzer's coverage: what runs here never guides the fuzzer (see CLibFuzzer.h).
#include "CLibFuzzer.h"

#include <time.h>

uint64_t courier_fuzz_thread_cpu_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

int courier_fuzz_cpu_over(uint64_t start, uint64_t budget_ns) {
    return courier_fuzz_thread_cpu_ns() - start > budget_ns;
}
