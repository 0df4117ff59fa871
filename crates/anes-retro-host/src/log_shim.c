/* The libretro log interface's callback is printf-like (C varargs), which stable Rust cannot define:
 * this formats the line and hands it to the host's sink, set at run time (no link-time reference
 * back into Rust). Licence: MIT OR Apache-2.0. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

typedef void (*anes_retro_log_sink)(unsigned level, const char *text, size_t len);

static anes_retro_log_sink sink;

void anes_retro_set_log_sink(anes_retro_log_sink new_sink) { sink = new_sink; }

void anes_retro_log_printf(unsigned level, const char *fmt, ...) {
    char line[1024];
    va_list args;
    int written;
    size_t len;
    if (!sink || !fmt)
        return;
    va_start(args, fmt);
    written = vsnprintf(line, sizeof line, fmt, args);
    va_end(args);
    if (written < 0)
        return;
    len = (size_t)written < sizeof line ? (size_t)written : sizeof line - 1;
    sink(level, line, len);
}
