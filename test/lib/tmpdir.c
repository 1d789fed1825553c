/* Scratch folders for the unit suites (tmpdir.h). */
#include "lib/tmpdir.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void tmpdir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char path[700];
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (unlink(path) != 0)
			tmpdir_remove(path);
	}
	closedir(d);
	rmdir(dir);
}
