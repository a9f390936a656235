/* ctl_main.h: `engine ctl`, the client of a running recorder's control channel (docs/ctl.md). */
#ifndef HS_CTL_MAIN_H
#define HS_CTL_MAIN_H

#include "hindsight/msg.h"

/* argv[0] is "ctl"'s first argument (argc counts from there); argv0 is the
 * program's, for finding the rules; msg is the program's sink (source "ctl").
 * The status, the snapshot's path and the usage go to stdout. Returns the exit
 * status (exitcodes.h). */
int hs_ctl_main(int argc, char **argv, const char *argv0, const hs_msg *msg);

#endif
