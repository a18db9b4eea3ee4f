/* Request handlers: one function per Kafka API, the fetch purgatory (long-poll fetches waiting
 * for data) and the admin operations waiting for ZooKeeper. Loop thread only. */
#ifndef SF_HANDLER_H
#define SF_HANDLER_H

#include "broker.h"
#include "server.h"

typedef struct sf_handler sf_handler_t;

/* A handler set for broker @b (borrowed). NULL on no memory. */
sf_handler_t *sf_handler_new(sf_broker_t *b);

/* Answer every waiting request (fetches with what they have, admin operations with their
 * outcome so far) and free the handlers. NULL is fine. */
void sf_handler_free(sf_handler_t *h);

/* The server's dispatch function: @arg is the sf_handler_t. Takes ownership of @req. */
void sf_handler_dispatch(sf_req_t *req, void *arg);

/* The metadata snapshot changed: admin operations waiting for it may complete. */
void sf_handler_on_snapshot(sf_handler_t *h);

#endif
