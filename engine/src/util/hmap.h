/* util/hmap.h: kept so library sources need no edit; the header is public now: new code includes "hindsight/hmap.h". */
#include "hindsight/hmap.h"
