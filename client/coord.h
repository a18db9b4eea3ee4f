/* Requests to a coordinator, from an application thread: FindCoordinator for a group or a
 * transactional id, then the request to the broker it names, both again (after
 * retry.backoff.ms) while the answer says the coordinator moved or is not ready. Used by the
 * admin client and the transactional producer. */
#ifndef SF_CLIENT_COORD_H
#define SF_CLIENT_COORD_H

#include <stdint.h>

#include "client.h"

#define SF_COORD_GROUP 0       /* FindCoordinator key types */
#define SF_COORD_TRANSACTION 1

/* Send the request to the coordinator of @key (*@coord, when not NULL, gets its id) and
 * return @dec's result, or the call's error. When that is one of the coordinator's
 * (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, a transport
 * error), the coordinator is found again and the request sent again, until @deadline
 * (monotonic ms). Lock NOT held. */
int sf_coord_call(sf_client_t *cl, const char *key, int8_t key_type, int16_t api,
                  int16_t max_version, sf_client_encode_fn enc, sf_client_decode_fn dec,
                  void *arg, int64_t deadline, int32_t *coord);

/* Milliseconds left until @deadline, at least 0; sleeping retry.backoff.ms (not past
 * @deadline). */
int sf_coord_ms_left(int64_t deadline);
void sf_coord_backoff(sf_client_t *cl, int64_t deadline);

#endif
