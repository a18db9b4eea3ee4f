/* The acceptor: binds every listener of the configuration (PLAINTEXT or SSL) on the metadata
 * thread's loop and hands each accepted socket to a network worker, which owns the connection
 * for its whole life (worker.h).
 *
 * accept() failing (out of descriptors) is logged once per streak and pauses accepting on that
 * listener, for longer after each failure in a row (never a busy loop on a connection that
 * stays pending).
 *
 * Threading: everything runs on the loop the acceptor was made on. */
#ifndef SF_ACCEPTOR_H
#define SF_ACCEPTOR_H

#include <stddef.h>

#include <openssl/ssl.h>

struct event_base;
struct sockaddr;
struct sf_brokercfg;

typedef struct sf_acceptor sf_acceptor_t;

/* A socket accepted on the listener named @listener ("PLAINTEXT", "SSL"; static while the
 * acceptor lives). @tls_ctx is the TLS context for an SSL listener (NULL for plaintext): the
 * callee takes one reference (SSL_CTX_free it when done). The callee owns @fd. */
typedef void (*sf_acceptor_handoff_fn)(void *arg, int fd, const struct sockaddr *sa,
                                       const char *listener, SSL_CTX *tls_ctx);

/* Bind every listener of @cfg (SO_REUSEADDR; an empty host binds 0.0.0.0) and create the TLS
 * context for SSL listeners from cfg->ssl_*. @base, @cfg and @arg are borrowed (@cfg only
 * during the call). Returns SF_OK with *out set, or SF_ERR_IO / SF_ERR_INVALID / SF_ERR_NOMEM
 * with one sentence in @errstr naming the listener and the reason (e.g. "listener
 * PLAINTEXT://:9092: cannot bind 0.0.0.0:9092: Address already in use"). */
int sf_acceptor_new(struct event_base *base, const struct sf_brokercfg *cfg,
                    sf_acceptor_handoff_fn fn, void *arg, sf_acceptor_t **out, char *errstr,
                    size_t errstr_size);

/* The port listener @i (index in cfg->listeners) is bound to: the configured port, or the one
 * the system chose for port 0. -1 if @i is out of range or the listener is closed. */
int sf_acceptor_port(const sf_acceptor_t *acc, size_t i);

/* Reload the TLS context from @cfg's ssl.* keys (SIGHUP certificate rotation). New connections
 * use the new context; established ones keep theirs. On error the old context stays in use and
 * a sentence is written to @errstr. Returns SF_OK, or an error. */
int sf_acceptor_reload_tls(sf_acceptor_t *acc, const struct sf_brokercfg *cfg, char *errstr,
                           size_t errstr_size);

/* Failed accept() calls since the start, over every listener (out of descriptors, most
 * often); each one pauses accepting on its listener for a while. */
long sf_acceptor_failures(const sf_acceptor_t *acc);

/* Close the listening sockets (controlled shutdown). */
void sf_acceptor_stop(sf_acceptor_t *acc);

/* Close the listeners and free the acceptor (NULL ok). */
void sf_acceptor_free(sf_acceptor_t *acc);

/* "127.0.0.1:54321" or "[::1]:54321" of @sa into @buf. */
void sf_acceptor_format_addr(const struct sockaddr *sa, char *buf, size_t size);

#endif
