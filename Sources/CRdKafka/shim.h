#ifndef PROVISIONER_CRDKAFKA_SHIM_H
#define PROVISIONER_CRDKAFKA_SHIM_H
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <pthread.h>

/* pthread_setname_np is a GNU extension Swift's Glibc module does not expose: name the calling
   thread (at most 15 bytes) so ps, debuggers and /proc show which client thread it is. */
extern int pthread_setname_np(pthread_t thread, const char *name);
static inline int provisioner_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
#endif
