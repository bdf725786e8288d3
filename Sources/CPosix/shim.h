#ifndef PROVISIONER_CPOSIX_SHIM_H
#define PROVISIONER_CPOSIX_SHIM_H
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/resource.h>

/* GNU extensions (glibc 2.34+ for closefrom) that Swift's Glibc module does not expose, since it
   is built without _GNU_SOURCE. Declared here with glibc's prototypes; they are in libc. */

/* pipe(2) with flags: O_CLOEXEC makes both ends close-on-exec atomically, so a child started by
   another thread between creation and an fcntl cannot inherit them. */
extern int pipe2(int pipefd[2], int flags);

/* A posix_spawn file action that closes every descriptor >= from in the child before exec. */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

/* accept(2) with flags: SOCK_CLOEXEC for the accepted socket, atomically. */
extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);

/* Names the calling thread so ps -L, top -H, perf, debuggers and /proc show which thread it is.
   The system keeps 15 bytes and refuses a longer name outright, so the first 15 are set. */
extern int pthread_setname_np(pthread_t thread, const char *name);
static inline int provisioner_name_current_thread(const char *name) {
    char kept[16];
    strncpy(kept, name, sizeof kept - 1);
    kept[sizeof kept - 1] = '\0';
    return pthread_setname_np(pthread_self(), kept);
}

/* Sets the calling thread's nice value (0 normal, 19 lowest). Linux keeps the nice value per
   thread, and setpriority with who 0 changes only the caller's. */
static inline int provisioner_set_current_thread_nice(int nice) {
    return setpriority(PRIO_PROCESS, 0, nice);
}

/* No core file for this process: a worker's memory holds issuer keys, signing secrets and request
   payloads, which a core dump would write to disk. */
static inline int provisioner_disable_core_dumps(void) {
    struct rlimit none = { 0, 0 };
    return setrlimit(RLIMIT_CORE, &none);
}
#endif
