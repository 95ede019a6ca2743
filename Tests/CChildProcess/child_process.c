#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include "child_process.h"

/// Closes every descriptor from 3 up in the child (those made by the file actions before it stay).
static int close_the_rest(posix_spawn_file_actions_t *actions, short *flags) {
#if defined(__APPLE__)
    (void)actions;
    *flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
    return 0;
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    (void)flags;
    return posix_spawn_file_actions_addclosefrom_np(actions, 3);
#else
    (void)actions;
    (void)flags;
    return ENOSYS;
#endif
}

int webcache_test_spawn(pid_t *identifier, const char *path, char *const arguments[], char *const environment[],
                        int input, int output, int error) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    const int given[3] = {input, output, error};
    for (int target = 0; target < 3 && result == 0; target++) {
        result = given[target] >= 0
                     ? posix_spawn_file_actions_adddup2(&actions, given[target], target)
                     : posix_spawn_file_actions_addopen(&actions, target, "/dev/null",
                                                        target == 0 ? O_RDONLY : O_WRONLY, 0);
    }
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (result == 0) result = close_the_rest(&actions, &flags);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setsigdefault(&attributes, &defaults);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, flags);
    if (result == 0) result = posix_spawn(identifier, path, &actions, &attributes, arguments, environment);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}
