/* util/regex.h: kept so library sources need no edit; the header is public now: new code includes "hindsight/regex.h". */
#include "hindsight/regex.h"
