#if defined(__linux__)
#define _GNU_SOURCE
#include <sched.h>
#endif

#include "processor_affinity.h"

int webcache_allowed_processor_count(void) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 0;
    }
    return CPU_COUNT(&set);
#else
    return 0;
#endif
}
