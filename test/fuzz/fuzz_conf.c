/* libFuzzer target: the configuration loader (inih and our key table) on
 * arbitrary file contents. A file that loads must also pass the layout's
 * own checks, and an error must name the file and a line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	static struct ring_conf conf;
	if (!path[0])
		snprintf(path, sizeof path, "/tmp/ring-fuzz-conf-%d.ini", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	char err[1024];
	int rc = ring_conf_load(path, &conf, err, sizeof err);
	unlink(path); /* libFuzzer exits without cleanup: leave nothing in /tmp */
	if (rc == 0) {
		char why[256];
		if (ring_layout_check(&conf.layout, why, sizeof why) != 0)
			abort(); /* loaded but not a valid ring */
	} else if (strncmp(err, path, strlen(path)) != 0 || err[strlen(path)] != ':') {
		abort(); /* every error is FILE:LINE: ... */
	}
	return 0;
}
