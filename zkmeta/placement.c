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


/* The index in @live of the broker holding the most (@most) or the fewest buckets. */
static int extreme(const int *count, int nlive, int most) {
    int i, best = 0;
    for (i = 1; i < nlive; i++)
        if (most ? count[i] > count[best] : count[i] < count[best])
            best = i;
    return best;
}

static int live_index(const int32_t *live, int nlive, int32_t id) {
    int lo = 0, hi = nlive - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (live[mid] == id)
            return mid;
        if (live[mid] < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int sf_placement_buckets(const sf_cluster_bucket_t *cur, int n, const int32_t *live, int nlive,
                         sf_cluster_bucket_t *out) {
    int *count = calloc((size_t)nlive, sizeof(int));
    int b, moved = 0;
    if (!count)
        return -1;
    for (b = 0; b < n; b++) {
        int i = live_index(live, nlive, cur[b].broker);
        out[b] = cur[b];
        if (i >= 0)
            count[i]++;
    }
    for (b = 0; b < n; b++) {
        if (live_index(live, nlive, out[b].broker) < 0) {
            int i = extreme(count, nlive, 0);
            out[b].broker = live[i];
            count[i]++;
        }
    }
    for (;;) {
        int hi = extreme(count, nlive, 1), lo = extreme(count, nlive, 0);
        if (count[hi] - count[lo] <= 1)
            break;
        for (b = n - 1; out[b].broker != live[hi]; b--)
            ;
        out[b].broker = live[lo];
        count[hi]--;
        count[lo]++;
    }
    for (b = 0; b < n; b++)
        if (out[b].broker != cur[b].broker) {
            out[b].epoch = cur[b].epoch + 1;
            moved++;
        }
    free(count);
    return moved;
}
