/* Log lines: text aligned for reading at a glance, or one JSON object per
 * line with ts, node, event and the event's fields. */
#include "log.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "err.h"

int ring_log_open(struct ring_log *lg, const char *path, enum ring_log_format format,
		  bool verbose, uint16_t node, char *err, size_t errlen)
{
	memset(lg, 0, sizeof *lg);
	lg->format = format;
	lg->verbose = verbose;
	lg->node = node;
	if (!path) {
		lg->out = stderr;
	} else {
		lg->out = fopen(path, "a");
		if (!lg->out) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return -RING_EIO;
		}
		lg->own = true;
	}
	/* One line at a time reaches the file: tools tail it while we run. */
	setvbuf(lg->out, NULL, _IOLBF, 0);
	return 0;
}

void ring_log_close(struct ring_log *lg)
{
	if (lg->own && lg->out)
		fclose(lg->out);
	lg->out = NULL;
}

bool ring_log_parse_format(const char *s, enum ring_log_format *format)
{
	if (strcmp(s, "text") == 0)
		*format = RING_LOG_TEXT;
	else if (strcmp(s, "json") == 0)
		*format = RING_LOG_JSON;
	else
		return false;
	return true;
}

static void timestamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06ldZ", ts.tv_nsec / 1000);
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void ring_log_emit(struct ring_log *lg, const char *event, bool verbose,
		   const struct ring_log_field *f, size_t n)
{
	if (!lg->out || (verbose && !lg->verbose))
		return;
	char ts[40];
	timestamp(ts, sizeof ts);
	FILE *out = lg->out;
	if (lg->format == RING_LOG_JSON) {
		fprintf(out, "{\"ts\":\"%s\",\"node\":%u,\"event\":", ts, lg->node);
		json_string(out, event);
		for (size_t i = 0; i < n; i++) {
			fputc(',', out);
			json_string(out, f[i].key);
			fputc(':', out);
			if (f[i].kind == RING_LF_STR)
				json_string(out, f[i].str ? f[i].str : "");
			else
				fprintf(out, "%llu", (unsigned long long)f[i].num);
		}
		fputs("}\n", out);
		return;
	}
	fprintf(out, "%s  node %-5u %-17s", ts, lg->node, event);
	for (size_t i = 0; i < n; i++) {
		if (f[i].kind == RING_LF_STR)
			fprintf(out, " %s=%s", f[i].key, f[i].str ? f[i].str : "");
		else if (f[i].kind == RING_LF_FENCE)
			fprintf(out, " %s=%llu:%llu", f[i].key,
				(unsigned long long)(f[i].num >> 32),
				(unsigned long long)(f[i].num & 0xffffffffu));
		else
			fprintf(out, " %s=%llu", f[i].key, (unsigned long long)f[i].num);
	}
	fputc('\n', out);
}

void ring_log_core(struct ring_log *lg, const struct ring_action *a)
{
	const struct ring_log_info *info = ring_log_info(a->u.log.event);
	if (!lg->out || (info->verbose && !lg->verbose))
		return;
	struct ring_log_field f[3];
	size_t n = 0;
	for (size_t i = 0; i < 3 && info->field[i]; i++) {
		const char *key = info->field[i];
		uint64_t v = a->u.log.field[i];
		if (strcmp(key, "reason") == 0)
			f[n++] = RING_LF_S(key, ring_strerror(-(int)v));
		else if (strcmp(key, "fence") == 0)
			f[n++] = (struct ring_log_field){.key = key, .kind = RING_LF_FENCE, .num = v};
		else
			f[n++] = RING_LF_N(key, v);
	}
	ring_log_emit(lg, info->name, info->verbose, f, n);
}
