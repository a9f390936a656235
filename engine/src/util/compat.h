/* util/compat.h: kept so library sources need no edit; the header is public now: new code includes "hindsight/compat.h". */
#include "hindsight/compat.h"
