#ifndef WEBCACHE_TEST_CHILD_PROCESS_H
#define WEBCACHE_TEST_CHILD_PROCESS_H

#include <sys/types.h>

/// Starts the program at `path` with `arguments` and `environment` (both ending in NULL) and
/// stores its process identifier in `identifier`. Its standard input, output and error are
/// `input`, `output` and `error` (-1: /dev/null); every other descriptor of this process is
/// closed in the child, whether or not it is close-on-exec; its signal mask is empty and SIGPIPE
/// has its default action, as when a shell starts it. 0 on success, an `errno` value otherwise.
int webcache_test_spawn(pid_t *identifier, const char *path, char *const arguments[], char *const environment[],
                        int input, int output, int error);

#endif
