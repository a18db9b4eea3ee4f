/* Admin client internals shared by adminapi.c (topics, configs, metadata, API versions),
 * admingroups.c (consumer groups) and adminproducers.c (producer state). */
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

#endif
