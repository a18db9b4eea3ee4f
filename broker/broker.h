/* The broker: ties the listeners, the request handlers, the log directories and the cluster
 * metadata in ZooKeeper together, and runs the startup and shutdown sequences. */
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

/* ---- For the request handlers (loop thread only) ---- */

struct sf_log;
struct sf_cluster;
struct sf_cluster_snapshot;
struct sf_cluster_topic;

/* The configuration (borrowed). */
const struct sf_brokercfg *sf_broker_cfg(const sf_broker_t *b);

/* The newest metadata snapshot (borrowed; NULL before the first one). */
struct sf_cluster_snapshot *sf_broker_snapshot(sf_broker_t *b);

/* The ZooKeeper metadata module for admin writes, or NULL while not registered or stopping. */
struct sf_cluster *sf_broker_cluster(sf_broker_t *b);

struct event_base *sf_broker_base(sf_broker_t *b);

/* The local log of a partition, or NULL if this broker holds none (borrowed). */
struct sf_log *sf_broker_log(sf_broker_t *b, const char *topic, int32_t partition);

/* The advertised endpoints "NAME://host:port" (borrowed). */
const char *const *sf_broker_endpoints(const sf_broker_t *b, size_t *n);

/* If @endpoint is "@listener://host:port", copy host (without IPv6 brackets) and port and
 * return 0; else -1. */
int sf_broker_endpoint_parse(const char *endpoint, const char *listener, char *host,
                             size_t hostsize, int32_t *port);

struct sf_purgatory;
struct sf_topiccfg_ctx;

/* The purgatory where requests wait (borrowed; NULL once shutting down). */
struct sf_purgatory *sf_broker_purgatory(sf_broker_t *b);

/* What topic config defaults are made of (borrowed). */
const struct sf_topiccfg_ctx *sf_broker_topiccfg(const sf_broker_t *b);

#endif
