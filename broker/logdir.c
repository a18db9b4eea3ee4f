#include "logdir.h"
typedef int sf_logdir_placeholder_t;
