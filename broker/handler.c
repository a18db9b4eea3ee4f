#include "handler.h"
typedef int sf_handler_placeholder_t;
