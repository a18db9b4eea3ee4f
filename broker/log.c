#include "log.h"
typedef int sf_log_placeholder_t;
