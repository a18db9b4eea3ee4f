/* Admin client internals shared by adminapi.c (topics, configs, metadata, API versions) and
 * admingroups.c (consumer groups). */
#ifndef SF_ADMINAPI_H
#define SF_ADMINAPI_H

#include "client.h"
#include "streamflow.h"

/* The client core under @a. */
sf_client_t *sf_admin_client(sf_admin_t *a);

/* The timeout of one call: @timeout_ms, or request.timeout.ms when it is <= 0. */
int sf_admin_timeout(sf_admin_t *a, int timeout_ms);

#endif
