#include "props.h"
typedef int sf_props_placeholder_t;
