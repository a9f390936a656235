/* util/arena.h: kept so library sources need no edit; the header is public now: new code includes "hindsight/arena.h". */
#include "hindsight/arena.h"
