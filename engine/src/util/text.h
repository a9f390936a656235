/* util/text.h: kept so library sources need no edit; the header is public now: new code includes "hindsight/text.h". */
#include "hindsight/text.h"
