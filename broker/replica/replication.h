/* Replication between brokers, this broker's half: its followers fetch from their leaders
 * (fetcher.c), and its leaders ask the controller for ISR changes (Kafka's AlterPartition)
 * and move their high watermarks as the ISR changes (leader.h).
 *
 * Both run on one thread: the I/O thread of an inter-broker client (libstreamflow's client
 * core, client/client.h), which connects to the other brokers on the inter-broker listener
 * (inter.broker.listener.name, else security.inter.broker.protocol, else the first listener)
 * with TLS on an SSL listener. One connection per leader carries the fetches of all the
 * partitions this broker follows there, one Fetch request at a time (Kafka's replica fetcher
 * thread). A fetch appends the leader's batches as they are (offsets and leader epochs kept)
 * and takes the leader's high watermark; a diverging epoch in the answer truncates the log
 * to where the two agree (KIP-101, KIP-279, checked through LastFetchedEpoch).
 *
 * Threading: sf_replication_update on the metadata thread; the rest runs on the client's
 * thread, which takes the views handed over under the client lock. */
#ifndef SF_REPLICATION_H
#define SF_REPLICATION_H

#include <stddef.h>

#include "broker.h"
#include "view.h"

struct sf_brokercfg;
struct sf_mail;

typedef struct sf_replication sf_replication_t;

/* Start the inter-broker client of the broker @b with @cfg (both borrowed for the module's
 * life). The broker's listeners must be bound (its advertised endpoints known). Returns SF_OK
 * and *@out, or SF_ERR_INVALID / SF_ERR_NOMEM with a sentence in @errstr. */
int sf_replication_new(const struct sf_brokercfg *cfg, sf_broker_t *b, sf_replication_t **out,
                       char *errstr, size_t errstr_size);

/* A new view (referenced here while needed): the partitions to follow and to lead. The
 * metadata thread. */
void sf_replication_update(sf_replication_t *r, sf_view_t *view);

/* Controlled shutdown (SIGTERM): ask the controller to move leadership off this broker
 * (ControlledShutdown), retrying controlled.shutdown.max.retries times while partitions are
 * still led here, then post @done to the metadata thread. Returns 1 when started, 0 when
 * there is nothing to do (controlled.shutdown.enable=false; @done is not posted). The
 * metadata thread. */
int sf_replication_controlled_shutdown(sf_replication_t *r, struct sf_mail *done);

/* Stop fetching and free everything (NULL ok). Requests in flight are abandoned. The metadata
 * thread. */
void sf_replication_free(sf_replication_t *r);

/* The inter-broker client (client.h) the module runs on, for other broker-to-broker requests
 * (transaction markers). */
struct sf_client *sf_replication_client(sf_replication_t *r);

#endif
