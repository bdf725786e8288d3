#ifndef PROVISIONER_CCURL_SHIM_H
#define PROVISIONER_CCURL_SHIM_H
#include <curl/curl.h>
/* The client's event loop waits with epoll and is woken through an eventfd (neither is in Swift's Glibc module). */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
/* curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt are variadic: typed wrappers for Swift. */
static inline CURLcode provisioner_curl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provisioner_curl_easy_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provisioner_curl_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provisioner_curl_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provisioner_curl_easy_setopt_write(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode provisioner_curl_easy_setopt_header(CURL *h, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
/* CURLOPT_PREREQFUNCTION (7.80): called once per attempt, after the connection is ready and before the request is sent. */
static inline CURLcode provisioner_curl_easy_setopt_prereq(CURL *h, int (*f)(void *, char *, char *, int, int)) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, f); }
static inline CURLcode provisioner_curl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provisioner_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode provisioner_curl_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode provisioner_curl_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode provisioner_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode provisioner_curl_multi_setopt_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode provisioner_curl_multi_setopt_socket(CURLM *m, int (*f)(CURL *, curl_socket_t, int, void *, void *)) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, f); }
static inline CURLMcode provisioner_curl_multi_setopt_timer(CURLM *m, int (*f)(CURLM *, long, void *)) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, f); }
/* CURLOPT_OPENSOCKETFUNCTION: libcurl's own socket() call has no SOCK_CLOEXEC, so a child
   process started by any thread would inherit every connection. This one opens it close-on-exec. */
static curl_socket_t provisioner_curl_open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)clientp; (void)purpose;
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}
static inline CURLcode provisioner_curl_easy_setopt_cloexec_sockets(CURL *h) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, provisioner_curl_open_socket); }
/* CURLMsg.data is an anonymous union: read the transfer result without Swift touching the union. */
static inline CURLcode provisioner_curl_msg_result(const CURLMsg *m) { return m->data.result; }
#endif
