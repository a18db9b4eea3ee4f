/* The broker: ties the acceptor, the network workers, the I/O threads, the log directories,
 * the partitions held here and the cluster metadata in ZooKeeper together, and runs the
 * startup and shutdown sequences.
 *
 * Threads: the metadata thread runs the loop given to sf_broker_new: the ZooKeeper session,
 * the controller, the acceptor, the admin requests and the table of partitions
 * (replicas.h). num.network.threads workers (worker.h) own the client connections and run the
 * request handlers; num.io.threads I/O threads run the appends and disk reads (iopool.h);
 * one log-manager thread creates and deletes logs and applies retention; each log directory
 * has a flusher thread (logdir.h). The metadata thread publishes what the others read as
 * immutable views (view.h) through their mailboxes. */
#ifndef SF_BROKER_H
#define SF_BROKER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct sf_brokercfg;

typedef struct sf_broker sf_broker_t;

/* Open the log directories, bind the listeners and start connecting to ZooKeeper. Registration
 * and the first metadata load finish asynchronously on @base; a failure there logs one line and
 * ends the loop with a non-zero sf_broker_exit_code(). @cfg is borrowed and must outlive the
 * broker. Returns SF_OK, or an error with a sentence in @errstr. */
int sf_broker_new(struct event_base *base, const struct sf_brokercfg *cfg, sf_broker_t **out,
                  char *errstr, size_t errstr_size);

/* Controlled shutdown (asynchronous): stop accepting, deregister from ZooKeeper, flush every log,
 * write the clean-shutdown marker, then end the event loop. */
void sf_broker_shutdown(sf_broker_t *b);

/* SIGHUP: reopen what can be reopened. */
void sf_broker_reload(sf_broker_t *b);

/* 0 after a clean run, 1 after a fatal error. */
int sf_broker_exit_code(const sf_broker_t *b);

/* Free everything (after the loop ended). NULL is fine. */
void sf_broker_free(sf_broker_t *b);

/* ---- For the request handlers ----
 * A handler runs on the network worker of its connection, or on the metadata thread for the
 * APIs that write to ZooKeeper (dispatch.c), and its appends and disk reads on the I/O
 * threads. Where a function answers "for the calling thread", it is the worker's or the
 * metadata thread's own object. */

struct sf_cluster;
struct sf_iopool;
struct sf_mail;
struct sf_purgatory;
struct sf_view;

/* The configuration (borrowed). Any thread. */
const struct sf_brokercfg *sf_broker_cfg(const sf_broker_t *b);

/* The newest view (view.h) of the calling thread (borrowed: reference it to keep it; NULL
 * before the first metadata snapshot). A worker or the metadata thread. */
struct sf_view *sf_broker_view(sf_broker_t *b);

/* The purgatory of the calling thread (borrowed). A worker or the metadata thread. */
struct sf_purgatory *sf_broker_purgatory(sf_broker_t *b);

/* Wake the requests waiting on the partition whose log is @log, on every worker. Any thread. */
void sf_broker_notify_partition(sf_broker_t *b, const void *log);

/* The I/O threads (iopool.h). Any thread. */
struct sf_iopool *sf_broker_io(sf_broker_t *b);

/* What this broker sends to throttled followers (throttle.h). Any thread. */
struct sf_throttle *sf_broker_leader_throttle(sf_broker_t *b);

/* Run m->fn(m->arg) on the metadata thread. Any thread; never fails. */
void sf_broker_to_metadata(sf_broker_t *b, struct sf_mail *m);

/* The ZooKeeper metadata module for admin writes, or NULL while not registered or stopping.
 * The metadata thread only. */
struct sf_cluster *sf_broker_cluster(sf_broker_t *b);

/* The group coordinator (group.h), or NULL while not ready or stopping. The metadata thread
 * only. */
struct sf_coord *sf_broker_coordinator(sf_broker_t *b);

/* The transaction coordinator (txn.h), the same way. */
struct sf_txn_coord *sf_broker_txn_coordinator(sf_broker_t *b);

/* Ask the transaction coordinator of @txn_id, as @snap places it, whether @parts (@n, sorted
 * by topic, borrowed until @cb) are in the ongoing transaction of producer @producer_id at
 * @epoch (verify.h). SF_OK, then @cb(@arg, one Kafka error per partition) runs once, on
 * another thread; SF_ERR_STATE when no broker owns the id's bucket, or another error (then
 * @cb does not run). Any thread. */
struct sf_cluster_snapshot;
struct sf_txn_tp;
int sf_broker_verify_txn(sf_broker_t *b, const struct sf_cluster_snapshot *snap,
                         const char *txn_id, int64_t producer_id, int16_t epoch,
                         const struct sf_txn_tp *parts, int n, int timeout_ms,
                         void (*cb)(void *arg, const int16_t *errs), void *arg);

/* The network counters for metrics: connections and queued bytes (netlimit.h), and failed
 * accept() calls. The metadata thread. */
struct sf_netlimit_stats;
void sf_broker_net_stats(const sf_broker_t *b, struct sf_netlimit_stats *out,
                         long *accept_failures);

/* The network workers, for metrics (worker.h's sf_worker_stats). The metadata thread. */
struct sf_worker;
int sf_broker_nworkers(const sf_broker_t *b);
struct sf_worker *sf_broker_worker(sf_broker_t *b, int i);

/* The advertised endpoints "NAME://host:port" (borrowed). Any thread. */
const char *const *sf_broker_endpoints(const sf_broker_t *b, size_t *n);

/* If @endpoint is "@listener://host:port", copy host (without IPv6 brackets) and port and
 * return 0; else -1. */
int sf_broker_endpoint_parse(const char *endpoint, const char *listener, char *host,
                             size_t hostsize, int32_t *port);

/* A libstreamflow client configuration for this broker's own clients (replication, the HTTP
 * gateway): this broker's endpoint on the inter-broker listener to start from (its Metadata
 * names the others), TLS settings from the broker's, client.id "streamflowd-<id>-@purpose",
 * client logs under @log_tag (a string that outlives the client). NULL with a sentence in
 * @errstr. */
struct sf_conf;
struct sf_conf *sf_broker_client_conf(sf_broker_t *b, const char *purpose, const char *log_tag,
                                      char *errstr, size_t errstr_size);

#endif
