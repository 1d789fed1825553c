/* libFuzzer target: the configuration loader (inih and our key table) on
 * arbitrary file contents. A file that loads must also pass the layout's
 * own checks and never run a ring beyond loopback unauthenticated unless it
 * says authentication = off; an error must name the file and a line. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "core/err.h"

/* The decision agrees with the file: keyed exactly when secret_file is
 * set, or by the ring's own key in state_dir only with every member on
 * loopback and authentication = auto; without a key only by choice. */
static void check_authentication(const struct ring_conf *conf)
{
	bool keyed = conf->secret_file[0] != '\0';
	bool loopback = true;
	for (size_t i = 0; i < conf->layout.n; i++)
		loopback = loopback && ring_conf_host_is_loopback(conf->layout.members[i].host);
	switch (conf->auth) {
	case RING_AUTH_KEYED:
		if (!keyed || conf->authentication == RING_CONF_AUTH_OFF)
			abort();
		if (conf->auto_key && (conf->authentication != RING_CONF_AUTH_AUTO || !loopback))
			abort();
		break;
	case RING_AUTH_OFF_CHOSEN:
		if (keyed || conf->authentication != RING_CONF_AUTH_OFF)
			abort();
		break;
	default:
		abort();
	}
}

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
		check_authentication(&conf);
	} else if (strncmp(err, path, strlen(path)) != 0 || err[strlen(path)] != ':') {
		abort(); /* every error is FILE:LINE: ... */
	}
	return 0;
}
