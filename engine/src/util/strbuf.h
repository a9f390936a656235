/* util/strbuf.h: kept so library sources need no edit; the header is public now: new code includes "hindsight/strbuf.h". */
#include "hindsight/strbuf.h"
