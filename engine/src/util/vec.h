/* util/vec.h: kept so library sources need no edit; the header is public now: new code includes "hindsight/vec.h". */
#include "hindsight/vec.h"
