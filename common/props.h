#ifndef SF_PROPS_H
#define SF_PROPS_H
#endif
