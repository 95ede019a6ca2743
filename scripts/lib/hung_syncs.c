// A disk whose syncs hang, for scripts/faults.sh: preloaded (LD_PRELOAD) into a process, fsync and
// fdatasync wait while the file named by $HUNG_SYNCS_WHILE exists, then go on. Writes to the page
// cache are not held, as on a failing flash card or a stalled network disk: only what waits for
// the device does.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static void wait_while_hung(void) {
    const char *flag = getenv("HUNG_SYNCS_WHILE");
    // Bounded, so that a forgotten flag cannot hold a process forever: ten minutes.
    for (int tries = 0; flag && tries < 60000 && access(flag, F_OK) == 0; tries++) usleep(10000);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    wait_while_hung();
    return real(fd);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    wait_while_hung();
    return real(fd);
}
