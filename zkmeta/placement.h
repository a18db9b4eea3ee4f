/* Replica placement: which brokers hold the replicas of new partitions. Pure functions. */
#ifndef SF_PLACEMENT_H
#define SF_PLACEMENT_H

#include <stdint.h>

/* Kafka's AdminUtils.assignReplicasToBrokersRackUnaware. @brokers: live broker ids sorted
 * ascending (n >= rf). Assign @npartitions partitions numbered from @start_partition with @rf
 * replicas each into @out (npartitions * rf ids, partition-major). @start_index is the
 * fixed start index, or -1 for a random one. Returns SF_OK or SF_ERR_INVALID. */
int sf_placement_assign(const int32_t *brokers, int nbrokers, int32_t npartitions, int rf,
                        int32_t start_partition, int start_index, int32_t *out);

#endif
