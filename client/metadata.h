/* Client metadata cache: brokers, controller, cluster id and the followed topics, refreshed
 * with Metadata requests. Internal to the client core; lock held everywhere. */
#ifndef SF_METADATA_H
#define SF_METADATA_H

#include <stdint.h>

#include "client.h"

/* A topic the client follows (sf_client_metadata_want). */
typedef struct sf_md_follow {
    char *name; /* owned; never removed before the client is destroyed */
    int autocreate;
} sf_md_follow_t;

typedef struct sf_md {
    sf_client_broker_t *brokers; /* sorted by id; owned */
    int nbrokers;
    int32_t controller;
    char *cluster_id;
    sf_client_topic_t **topics; /* sorted by name; owned */
    int ntopics;

    sf_md_follow_t *follow;
    int nfollow, capfollow;

    int ever;              /* a Metadata response was applied at least once */
    unsigned seq;          /* incremented on every applied response */
    int64_t updated_ms;    /* when the last response was applied (monotonic) */
    int64_t sent_ms;       /* when the last request was sent */
    int64_t refresh_at;    /* next refresh (INT64_MAX: none planned) */
    int inflight;          /* Metadata requests in flight */
    int again;             /* something changed while a request was in flight */
    int transient;         /* consecutive refreshes that left transient errors */
    int all_topics;        /* sf_client_metadata_all: every refresh also asks for all topics */
} sf_md_t;

void sf_md_init(sf_md_t *md);
void sf_md_free(sf_md_t *md);

/* Send a refresh if one is due (I/O thread). */
void sf_md_service(sf_client_t *cl, int64_t now);

/* Plan a refresh no later than @at (coalesced with a planned or in-flight one). */
void sf_md_refresh_at(sf_client_t *cl, int64_t at);

/* 1 if broker @id is in the cache. */
int sf_md_has_broker(sf_client_t *cl, int32_t id);

#endif
