#ifndef PROVISIONER_CMICROHTTPD_SHIM_H
#define PROVISIONER_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netdb.h>
#include <netinet/in.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic: one typed wrapper with the options Provisioner uses.
   thread_pool_size <= 1 means a single internal polling thread. Returns NULL on failure.
   libmicrohttpd creates the listening socket itself (SOCK_CLOEXEC, SO_REUSEADDR), accepts with
   accept4(SOCK_CLOEXEC), and closes the listening socket in MHD_stop_daemon: it is its only owner.
   `accept_policy` refuses connections once the server is stopping (instead of MHD_quiesce_daemon,
   which races the polling threads' own epoll bookkeeping in 0.9.75: see HTTPServer.stop). */
static inline struct MHD_Daemon *provisioner_mhd_start_daemon(
    unsigned int flags, const struct sockaddr *address,
    MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback notify, void *notify_cls,
    unsigned int connection_limit, unsigned int connection_timeout_seconds,
    unsigned int thread_pool_size, unsigned int listen_backlog)
{
    struct MHD_OptionItem options[9];
    int n = 0;
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)address };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, completed_cls };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)notify, notify_cls };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)connection_timeout_seconds, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_BACKLOG_SIZE, (intptr_t)listen_backlog, NULL };
    if (thread_pool_size > 1)
        options[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)thread_pool_size, NULL };
    options[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    return MHD_start_daemon(flags, 0, accept_policy, accept_policy_cls, handler, handler_cls, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/* MHD_get_daemon_info is variadic: the port the daemon listens on, 0 if unknown. */
static inline uint16_t provisioner_mhd_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* MHD_get_connection_info is variadic: the connection's peer address as numeric text ("192.0.2.1",
   "2001:db8::1") in `out`; returns 0, or -1 when it is not known (out is then empty). */
static inline int provisioner_mhd_peer_address(struct MHD_Connection *connection, char *out, size_t length)
{
    if (length == 0) return -1;
    out[0] = '\0';
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *address = info->client_addr;
    socklen_t size = address->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (address->sa_family != AF_INET && address->sa_family != AF_INET6) return -1;
    return getnameinfo(address, size, out, (socklen_t)length, NULL, 0, NI_NUMERICHOST) == 0 ? 0 : -1;
}

#endif
