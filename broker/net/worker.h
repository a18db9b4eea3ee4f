/* A network worker: one thread running its own event loop, with the client connections the
 * acceptor handed to it (server.h), a mailbox other threads post to (mailbox.h) and a
 * purgatory for the requests of its connections that wait (purgatory.h). The broker runs
 * num.network.threads of them.
 *
 * Ownership and threading rules:
 * - A connection belongs to the worker that adopted it, for life; its requests are read,
 *   dispatched and answered on that worker's thread. An answer given on another thread (an
 *   I/O thread, the metadata thread) travels through the worker's mailbox (server.h).
 * - A worker's purgatory, server and loop are touched only by its own thread (asserted by
 *   the purgatory and the mailbox); other threads post closures to its mailbox.
 * - Everything the worker reads that another thread writes (metadata, the partition table)
 *   reaches it as an immutable, reference-counted object through its mailbox.
 * - sf_worker_adopt and sf_worker_post may be called from any thread; the rest from the
 *   thread that made the worker, except where noted. */
#ifndef SF_WORKER_H
#define SF_WORKER_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "mailbox.h"
#include "purgatory.h"
#include "server.h"

struct sockaddr;
struct sf_brokercfg;
struct sf_netlimit;

typedef struct sf_worker sf_worker_t;

/* Start worker number @index: its thread ("net/<index>"), loop, mailbox, purgatory and
 * connection set, whose requests go to @fn(@arg) on the worker's thread. @cfg and @nl (the
 * limits shared by every worker, netlimit.h; NULL for none) are borrowed for the worker's
 * life. Returns SF_OK with *out, SF_ERR_NOMEM or SF_ERR_IO (no thread). */
int sf_worker_start(int index, const struct sf_brokercfg *cfg, struct sf_netlimit *nl,
                    sf_server_dispatch_fn fn, void *arg, sf_worker_t **out);

/* Hand the accepted socket @fd (owned from now on) to @w; @tls_ctx as for sf_server_adopt
 * (one reference, taken over). Any thread. */
void sf_worker_adopt(sf_worker_t *w, int fd, const struct sockaddr *sa, const char *listener,
                     SSL_CTX *tls_ctx);

/* Run @fn(@arg) on the worker's thread. Any thread. 0, or -1 on no memory. */
int sf_worker_post(sf_worker_t *w, sf_mailbox_fn fn, void *arg);

/* The worker whose thread calls this, or NULL on any other thread. */
sf_worker_t *sf_worker_self(void);

/* Its number (0 .. num.network.threads - 1). Any thread. */
int sf_worker_index(const sf_worker_t *w);

/* Its purgatory (the worker's own thread). */
struct sf_purgatory *sf_worker_purgatory(sf_worker_t *w);

/* For metrics, any thread: the CPU time the worker's thread used (its busy time: the loop
 * sleeps in epoll when idle), and the operations parked in its purgatory. */
void sf_worker_stats(const sf_worker_t *w, double *cpu_seconds, size_t *parked);

/* Wake what waits on @key in its purgatory (sf_purgatory_notify). Any thread. */
void sf_worker_notify(sf_worker_t *w, sf_pkey_t key);

/* First step of shutdown, asynchronous: the worker stops reading requests, completes its
 * parked requests (their deadline is now), then posts @done(@arg) to @reply. */
void sf_worker_quiesce(sf_worker_t *w, sf_mailbox_t *reply, sf_mailbox_fn done, void *arg);

/* Run what its mailbox still holds, close its connections, stop its thread and free it
 * (NULL ok). Call after the other threads stopped answering its requests. */
void sf_worker_stop(sf_worker_t *w);

#endif
