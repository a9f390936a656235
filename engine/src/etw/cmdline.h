/* etw/cmdline.h: Windows command-line quoting for launch mode (portable C, tested on every host). */
#ifndef HS_ETW_CMDLINE_H
#define HS_ETW_CMDLINE_H

/* prog followed by argv (NULL-terminated, may be NULL), each word quoted so
 * that CommandLineToArgvW gives the same words back. Returns a new UTF-8
 * string (free()), or NULL on OOM or when prog contains a '"' (no Windows
 * path can, and argv[0] has no way to escape one). */
char *hs_win_cmdline(const char *prog, char *const *argv);

#endif
