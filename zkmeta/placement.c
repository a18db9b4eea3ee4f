/* Replica placement (see placement.h). */
#include "placement.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "err.h"

static uint32_t random_u32(void) {
    uint32_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
        v = (uint32_t)sf_clock_wall_ms();
    return v;
}

/* Kafka's assignReplicasToBrokersRackUnaware, with its start index and replica shift. */
static void assign_rack_unaware(const int32_t *brokers, int nbrokers, int32_t npartitions, int rf,
                                int32_t start_partition, int start, int shift, int32_t *out) {
    int32_t i, part = start_partition;
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
}

/* A broker and its rack, sorted by rack name, then id. */
typedef struct racked {
    const char *rack;
    int32_t id;
} racked_t;

static int racked_cmp(const void *a, const void *b) {
    const racked_t *x = a, *y = b;
    int c = strcmp(x->rack, y->rack);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Kafka's getRackAlternatedBrokerList: the brokers taking one from each rack in turn (racks
 * by name, the brokers of a rack by id, a rack left out once it has none left). */
typedef struct arranged {
    int32_t *id; /* the brokers in that order */
    int *rack;   /* the rack of each, numbered by name from 0 */
    int nracks;
} arranged_t;

static void arranged_clear(arranged_t *arr) {
    free(arr->id);
    free(arr->rack);
    arr->id = NULL;
    arr->rack = NULL;
}

/* Deal the sorted @rb (@n brokers, racks numbered in @rackno) out to @arr: @next[r] is the
 * next broker of rack r, @end[r] one past its last. */
static void deal(const racked_t *rb, const int *rackno, int n, int *next, const int *end,
                 arranged_t *arr) {
    int k = 0, r = 0;
    while (k < n) {
        if (next[r] < end[r]) {
            arr->id[k] = rb[next[r]].id;
            arr->rack[k++] = rackno[next[r]++];
        }
        r = (r + 1) % arr->nracks;
    }
}

/* @arr for the @n @brokers of @racks. Returns SF_OK or SF_ERR_NOMEM (@arr then empty). */
static int arrange(const int32_t *brokers, const char *const *racks, int n, arranged_t *arr) {
    racked_t *rb = malloc((size_t)n * sizeof(*rb));
    int *rackno = malloc((size_t)n * sizeof(int)), *next = malloc((size_t)n * sizeof(int));
    int *end = malloc((size_t)n * sizeof(int)), i, rc = SF_ERR_NOMEM;
    arr->id = malloc((size_t)n * sizeof(int32_t));
    arr->rack = malloc((size_t)n * sizeof(int));
    arr->nracks = 0;
    if (!rb || !rackno || !next || !end || !arr->id || !arr->rack)
        goto out;
    for (i = 0; i < n; i++) {
        rb[i].rack = racks[i];
        rb[i].id = brokers[i];
    }
    qsort(rb, (size_t)n, sizeof(*rb), racked_cmp);
    for (i = 0; i < n; i++) {
        if (i == 0 || strcmp(rb[i].rack, rb[i - 1].rack)) {
            next[arr->nracks] = i;
            arr->nracks++;
        }
        rackno[i] = arr->nracks - 1;
        end[arr->nracks - 1] = i + 1;
    }
    deal(rb, rackno, n, next, end, arr);
    rc = SF_OK;
out:
    free(rb);
    free(rackno);
    free(next);
    free(end);
    if (rc != SF_OK)
        arranged_clear(arr);
    return rc;
}

/* One partition's replicas into @row: the leader at @first of @arr, then the brokers after it
 * in Kafka's order (offset shift * nracks + k, k counting every broker tried), skipping one
 * whose rack already has a replica while some rack has none, and one that has a replica.
 * @rack_has (nracks) and @broker_has (n): scratch. */
static void place_partition(const arranged_t *arr, int n, int first, int shift, int rf,
                            char *rack_has, char *broker_has, int32_t *row) {
    int j, k = 0, nracks_used = 1;
    assert(rf <= n);
    memset(rack_has, 0, (size_t)arr->nracks);
    memset(broker_has, 0, (size_t)n);
    row[0] = arr->id[first];
    rack_has[arr->rack[first]] = 1;
    broker_has[first] = 1;
    /* rf > 1 here means n >= 2. Within n - 1 tries k covers every other broker, and one of
     * them fits: a broker of a rack without a replica, else (rf <= n) one without a replica. */
    for (j = 1; j < rf; j++, k++) {
        int b;
        for (;; k++) {
            b = (first + 1 + (int)(((int64_t)shift * arr->nracks + k) % (n - 1))) % n;
            if ((!rack_has[arr->rack[b]] || nracks_used == arr->nracks) && !broker_has[b])
                break;
        }
        row[j] = arr->id[b];
        nracks_used += !rack_has[arr->rack[b]];
        rack_has[arr->rack[b]] = 1;
        broker_has[b] = 1;
    }
}

/* Kafka's assignReplicasToBrokersRackAware over the rack-alternated list. */
static int assign_rack_aware(const int32_t *brokers, const char *const *racks, int nbrokers,
                             int32_t npartitions, int rf, int32_t start_partition, int start,
                             int shift, int32_t *out) {
    arranged_t arr;
    char *rack_has, *broker_has;
    int32_t i, part = start_partition;
    int rc = arrange(brokers, racks, nbrokers, &arr);
    if (rc != SF_OK)
        return rc;
    rack_has = malloc((size_t)arr.nracks);
    broker_has = malloc((size_t)nbrokers);
    if (rack_has && broker_has) {
        for (i = 0; i < npartitions; i++, part++) {
            if (part > 0 && part % nbrokers == 0)
                shift++;
            place_partition(&arr, nbrokers, (int)((part + start) % nbrokers), shift, rf,
                            rack_has, broker_has, out + (size_t)i * (size_t)rf);
        }
    } else {
        rc = SF_ERR_NOMEM;
    }
    free(rack_has);
    free(broker_has);
    arranged_clear(&arr);
    return rc;
}

int sf_placement_rack_aware(const char *const *racks, int nbrokers) {
    int i;
    if (!racks || nbrokers < 1)
        return 0;
    for (i = 0; i < nbrokers; i++)
        if (!racks[i])
            return 0;
    return 1;
}

int sf_placement_assign(const int32_t *brokers, const char *const *racks, int nbrokers,
                        int32_t npartitions, int rf, int32_t start_partition, int start_index,
                        int32_t *out) {
    int start, shift;
    if (!brokers || !out || nbrokers < 1 || npartitions < 1 || rf < 1 || rf > nbrokers ||
        start_partition < 0 || start_index >= nbrokers)
        return SF_ERR_INVALID;
    /* Kafka: startIndex and nextReplicaShift are both random unless fixed. */
    start = start_index >= 0 ? start_index : (int)(random_u32() % (uint32_t)nbrokers);
    shift = start_index >= 0 ? start_index : (int)(random_u32() % (uint32_t)nbrokers);
    if (sf_placement_rack_aware(racks, nbrokers))
        return assign_rack_aware(brokers, racks, nbrokers, npartitions, rf, start_partition,
                                 start, shift, out);
    assign_rack_unaware(brokers, nbrokers, npartitions, rf, start_partition, start, shift, out);
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
