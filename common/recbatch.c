#include "recbatch.h"
typedef int sf_recbatch_placeholder_t;
