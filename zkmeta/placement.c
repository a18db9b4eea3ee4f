/* Replica placement (see placement.h). */
#include "placement.h"

#include <stdlib.h>
#include <sys/random.h>

#include "clock.h"
#include "err.h"

static uint32_t random_u32(void) {
    uint32_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
        v = (uint32_t)sf_clock_wall_ms();
    return v;
}

int sf_placement_assign(const int32_t *brokers, int nbrokers, int32_t npartitions,
                          int rf, int32_t start_partition, int start_index, int32_t *out) {
    int start, shift;
    int32_t i, part;
    if (!brokers || !out || nbrokers < 1 || npartitions < 1 || rf < 1 || rf > nbrokers ||
        start_partition < 0 || start_index >= nbrokers)
        return SF_ERR_INVALID;
    /* Kafka: startIndex and nextReplicaShift are both random unless fixed. */
    start = start_index >= 0 ? start_index : (int)(random_u32() % (uint32_t)nbrokers);
    shift = start_index >= 0 ? start_index : (int)(random_u32() % (uint32_t)nbrokers);
    part = start_partition;
    for (i = 0; i < npartitions; i++, part++) {
        int first, j;
        if (part > 0 && part % nbrokers == 0)
            shift++;
        first = (int)((part + start) % nbrokers);
        out[(size_t)i * (size_t)rf] = brokers[first];
        for (j = 0; j < rf - 1; j++) {
            int s = 1 + (shift + j) % (nbrokers - 1);
            out[(size_t)i * (size_t)rf + (size_t)j + 1] = brokers[(first + s) % nbrokers];
        }
    }
    return SF_OK;
}

