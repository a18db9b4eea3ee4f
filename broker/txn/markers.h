/* Delivering a transaction's markers (txn.h's sf_txn_send_markers_fn): WriteTxnMarkers to the
 * leader of each partition, one request per leader, over the inter-broker client; partitions
 * that fail are sent again from the newest metadata until every one has its marker, as
 * Kafka's TransactionMarkerChannelManager does. A partition whose topic is gone from the
 * metadata counts as done. "__consumer_offsets" partitions go to the group coordinator of
 * that bucket.
 *
 * Metadata thread (the client's callbacks come back to it through the broker's mailbox). */
#ifndef SF_MARKERS_H
#define SF_MARKERS_H

#include "txn.h"

struct event_base;
struct sf_broker;
struct sf_client;

typedef struct sf_txn_sender sf_txn_sender_t;

/* @base: the metadata thread's loop; @cl: the inter-broker client (replication.h). */
sf_txn_sender_t *sf_txn_sender_new(struct event_base *base, struct sf_broker *b,
                                   struct sf_client *cl);
/* Deliveries under way end with SF_ERR_IO (once their requests came back). NULL ignored. */
void sf_txn_sender_free(sf_txn_sender_t *s);
/* An sf_txn_send_markers_fn: @arg is the sender. */
void sf_txn_send_markers(void *arg, const sf_txn_markers_t *m, sf_txn_markers_done_cb done,
                         void *done_arg);

#endif
