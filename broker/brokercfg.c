#include "brokercfg.h"
typedef int sf_brokercfg_placeholder_t;
