/* Admin client internals shared by adminapi.c (topics, configs, metadata, API versions),
 * admingroups.c (consumer groups), adminproducers.c (producer state), admintxn.c
 * (transactions) and adminreassign.c (partition reassignments). */
#ifndef SF_ADMINAPI_H
#define SF_ADMINAPI_H

#include "client.h"
#include "streamflow.h"

/* The client core under @a. */
sf_client_t *sf_admin_client(sf_admin_t *a);

/* The timeout of one call: @timeout_ms, or request.timeout.ms when it is <= 0. */
int sf_admin_timeout(sf_admin_t *a, int timeout_ms);
/* The monotonic deadline of a call of @timeout_ms (as sf_admin_timeout) from now. */
int64_t sf_admin_deadline(sf_admin_t *a, int timeout_ms);
/* Milliseconds left until @deadline, at least 0. */
int sf_admin_ms_left(int64_t deadline);
/* Sleep retry.backoff.ms, not past @deadline. */
void sf_admin_backoff(sf_admin_t *a, int64_t deadline);
/* A decoder's result: SF_OK and SF_ERR_NOMEM as they are, anything else SF_ERROR_MALFORMED. */
int sf_admin_decoded(int rc);

/* A malloc'd copy of @s ("" for null); NULL when out of memory. */
char *sf_admin_dup_slice(sf_slice_t s);

/* Send the request to the controller, again after a metadata refresh and retry.backoff.ms
 * while *@kerr (the answer's top-level error, reset before each call and set by @dec) is
 * NOT_CONTROLLER. Returns the transport error, SF_ERROR_TIMED_OUT at @deadline, else SF_OK
 * with *@kerr left for the caller. */
int sf_admin_controller_call(sf_admin_t *a, int64_t deadline, int16_t api, int16_t max_version,
                             sf_client_encode_fn enc, sf_client_decode_fn dec, void *arg,
                             int16_t *kerr);

/* The ids of the cluster's brokers (Metadata), in *@ids (@n; malloc'd). */
int sf_admin_broker_ids(sf_admin_t *a, int64_t deadline, int32_t **ids, size_t *n);

/* Send the request to every broker in turn, *@broker set to each before its call and *@kerr
 * (the answer's top-level error, set by @dec) reset: returns the first error, of the
 * Metadata call, a broker's call or its *@kerr. */
int sf_admin_each_broker(sf_admin_t *a, int64_t deadline, int16_t api, int16_t max_version,
                         sf_client_encode_fn enc, sf_client_decode_fn dec, void *arg,
                         int32_t *broker, int16_t *kerr);

#endif
